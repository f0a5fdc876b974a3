import type { DeliveredEvent } from '@trading/events';
import { describeDuration } from './webhook-dispatcher';
import { webhookEventOf } from './webhook-events';

const USER = '6f1c2a52-0d7e-4c55-9a57-3a1f4d0c0a01';
const ACCOUNT = '0b7e9a10-5c3d-4e2f-8a61-2b9d7c4e1a01';
const entry = (type: string, payload: Record<string, unknown>): DeliveredEvent => ({
  entryId: '1-0',
  eventId: '7d0f4a6e-1b2c-4d3e-8f90-a1b2c3d4e5f6',
  type,
  payload: { occurredAt: '2026-11-29T10:00:00.000Z', ...payload },
});

describe('which stream entries become webhook events', () => {
  it("an order's change is its status's event, once per status and filled quantity, for the user the OMS named", () => {
    const order = { id: 'o-1', accountId: ACCOUNT, status: 'PARTIALLY_FILLED', filledQuantity: '1' };
    const event = webhookEventOf(entry('order.updated', { order, userId: USER }));
    expect(event).toEqual({
      id: '7d0f4a6e-1b2c-4d3e-8f90-a1b2c3d4e5f6',
      type: 'order.partially_filled',
      userId: USER,
      accountId: ACCOUNT,
      dedupeKey: 'order.partially_filled:o-1:1',
      data: { order },
      occurredAt: '2026-11-29T10:00:00.000Z',
    });
    // A second part-fill is a new event; the same status and quantity announced again is the same one.
    const next = webhookEventOf(entry('order.updated', { order: { ...order, filledQuantity: '2' }, userId: USER }));
    expect(next!.dedupeKey).not.toBe(event!.dedupeKey);
  });

  it("a transfer's end is its event; its cancel, and entries without a user or of other types, are none", () => {
    const transaction = { id: 't-1', accountId: ACCOUNT, type: 'WITHDRAWAL', state: 'REJECTED' };
    expect(webhookEventOf(entry('funding.updated', { transaction, userId: USER }))).toMatchObject({
      type: 'funding.withdrawal.failed',
      accountId: ACCOUNT,
      dedupeKey: 'funding.withdrawal.failed:t-1',
      data: { transaction },
    });
    expect(webhookEventOf(entry('funding.updated', { transaction: { ...transaction, state: 'CANCELLED' }, userId: USER }))).toBeNull();
    expect(webhookEventOf(entry('funding.updated', { transaction }))).toBeNull();
    expect(webhookEventOf(entry('order.updated', { order: { id: 'o', status: 'NEW' }, userId: '' }))).toBeNull();
    expect(webhookEventOf(entry('order.updated', { order: 'not an object', userId: USER }))).toBeNull();
    expect(webhookEventOf(entry('trade.executed', { trade: {}, userId: USER }))).toBeNull();
  });

  it("says the vendor's failure limit in words", () => {
    expect(describeDuration(3 * 86_400_000)).toBe('3 days');
    expect(describeDuration(3_600_000)).toBe('1 hour');
    expect(describeDuration(90_000)).toBe('90 seconds');
    expect(describeDuration(2000)).toBe('2 seconds');
  });
});
