import {
  fundingEventType,
  isWebhookEventType,
  messageIdOf,
  orderEventType,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_EVENTS,
  webhookEnvelope,
} from './events';

describe('webhook events', () => {
  it('names each order status as its event; a cancelled order that names its replacement was replaced', () => {
    expect(orderEventType({ status: 'NEW' })).toBe('order.accepted');
    expect(orderEventType({ status: 'PARTIALLY_FILLED' })).toBe('order.partially_filled');
    expect(orderEventType({ status: 'FILLED' })).toBe('order.filled');
    expect(orderEventType({ status: 'CANCELLED', replacedBy: null })).toBe('order.cancelled');
    expect(orderEventType({ status: 'CANCELLED', replacedBy: '0b7e9a10-5c3d-4e2f-8a61-2b9d7c4e1a01' })).toBe('order.replaced');
    expect(orderEventType({ status: 'REJECTED' })).toBe('order.rejected');
    expect(orderEventType({ status: 'EXPIRED' })).toBe('order.expired');
    // ACCEPTED is the moment before the hold is made: no vendor hears of it until it works.
    for (const status of ['ACCEPTED', 'PENDING', undefined, 7]) expect(orderEventType({ status })).toBeNull();
  });

  it("names a transfer's end: completed settles, rejected fails, a user's cancel is none", () => {
    expect(fundingEventType({ type: 'DEPOSIT', state: 'COMPLETED' })).toBe('funding.deposit.settled');
    expect(fundingEventType({ type: 'DEPOSIT', state: 'REJECTED' })).toBe('funding.deposit.failed');
    expect(fundingEventType({ type: 'WITHDRAWAL', state: 'COMPLETED' })).toBe('funding.withdrawal.settled');
    expect(fundingEventType({ type: 'WITHDRAWAL', state: 'REJECTED' })).toBe('funding.withdrawal.failed');
    expect(fundingEventType({ type: 'WITHDRAWAL', state: 'CANCELLED' })).toBeNull();
    expect(fundingEventType({ type: 'WITHDRAWAL', state: 'PENDING' })).toBeNull();
    expect(fundingEventType({ type: 'TRANSFER', state: 'COMPLETED' })).toBeNull();
  });

  it('every order and funding event needs its read scope; grant.revoked needs none', () => {
    for (const type of WEBHOOK_EVENT_TYPES) {
      const expected = type.startsWith('order.') ? 'read:orders' : type.startsWith('funding.') ? 'read:banking' : null;
      expect({ type, scope: WEBHOOK_EVENTS[type].scope }).toEqual({ type, scope: expected });
    }
    expect(isWebhookEventType('order.filled')).toBe(true);
    for (const value of ['order.exploded', 'toString', 'constructor', '', null, 3]) expect(isWebhookEventType(value)).toBe(false);
  });

  it('a message id comes from the event id alone, so every retry carries the same one; the envelope takes only that shape', () => {
    const id = messageIdOf('0B7E9A10-5C3D-4E2F-8A61-2B9D7C4E1A01');
    expect(id).toBe('msg_0b7e9a105c3d4e2f8a612b9d7c4e1a01');
    const good = { id, type: 'order.filled', timestamp: '2026-11-29T10:00:00.000Z', data: { order: {} } };
    expect(webhookEnvelope.safeParse(good).success).toBe(true);
    expect(webhookEnvelope.safeParse({ ...good, id: 'msg_1' }).success).toBe(false);
    expect(webhookEnvelope.safeParse({ ...good, type: 'order.exploded' }).success).toBe(false);
  });
});
