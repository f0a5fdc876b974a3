import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { DeliveredEvent } from './event-log';
import { refuseUnlessFromOms, settlementShapeProblem } from './settlement-contract';
import { signEvent } from './signature';

const oms = { kid: 'oms-1', ...generateKeyPairSync('ec', { namedCurve: 'P-256' }) };
const signers = new Map([[oms.kid, { service: 'oms', key: oms.publicKey }]]);

function tradeExecuted(trade: Record<string, unknown> = {}): DeliveredEvent {
  const eventId = randomUUID();
  const payload = {
    eventId,
    occurredAt: '2026-11-25T13:00:00.000Z',
    type: 'trade.executed',
    trade: {
      id: randomUUID(),
      orderId: randomUUID(),
      accountId: randomUUID(),
      symbol: 'AAPL',
      side: 'BUY',
      quantity: '10',
      price: '189.84',
      currency: 'USD',
      grossAmount: '1898.40',
      commission: '1.00',
      netAmount: '-1899.40',
      executedAt: '2026-11-25T13:00:00.000Z',
      ...trade,
    },
  };
  return { eventId, type: 'trade.executed', payload, entryId: '1-0', payloadJson: JSON.stringify(payload) };
}

function orderReduced(order: Record<string, unknown> = {}): DeliveredEvent {
  const eventId = randomUUID();
  const payload = {
    eventId,
    occurredAt: '2026-11-25T13:00:00.000Z',
    type: 'order.reduced',
    order: {
      id: randomUUID(),
      accountId: randomUUID(),
      side: 'BUY',
      currency: 'USD',
      quantity: '6',
      filledQuantity: '0',
      settledAmount: '0',
      holdAmount: '61.00',
      ...order,
    },
  };
  return { eventId, type: 'order.reduced', payload, entryId: '1-0', payloadJson: JSON.stringify(payload) };
}

describe('settlement contract', () => {
  it('accepts a fill shaped as the contract says', () => {
    expect(settlementShapeProblem(tradeExecuted())).toBeNull();
  });

  it('refuses a malformed event naming the field at fault, before anything is booked', () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ quantity: '0' }, /^trade\.quantity must be greater than zero$/],
      [{ quantity: '-10' }, /^trade\.quantity must be a non-negative decimal/],
      [{ price: '1e3' }, /^trade\.price must be a non-negative decimal/],
      // numeric(20, 8) holds 12 integer digits: a 13th would fail the insert, not the check.
      [{ grossAmount: '1234567890123' }, /^trade\.grossAmount /],
      [{ commission: '0.123456789' }, /^trade\.commission /],
      [{ currency: 'usd' }, /^trade\.currency must be an ISO 4217 code$/],
      [{ accountId: 'acc-1' }, /^trade\.accountId must be a UUID$/],
      [{ side: 'SHORT' }, /^trade\.side /],
      [{ symbol: undefined }, /^trade\.symbol /],
    ];
    for (const [change, problem] of cases) {
      expect([change, settlementShapeProblem(tradeExecuted(change))]).toEqual([change, expect.stringMatching(problem)]);
    }
  });

  it('accepts a buy leg brought down to a remainder, and refuses a malformed one naming the field at fault', () => {
    expect(settlementShapeProblem(orderReduced())).toBeNull();
    expect(settlementShapeProblem(orderReduced({ filledQuantity: '2', settledAmount: '21.00' }))).toBeNull();
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ quantity: '0' }, /^order\.quantity must be greater than zero$/],
      [{ holdAmount: '-61.00' }, /^order\.holdAmount must be a non-negative decimal/],
      [{ holdAmount: undefined }, /^order\.holdAmount /],
      [{ settledAmount: '1e3' }, /^order\.settledAmount must be a non-negative decimal/],
      [{ filledQuantity: '0.123456789' }, /^order\.filledQuantity /],
      // Only a buy holds cash: a sell has nothing for banking to give back.
      [{ side: 'SELL' }, /^order\.side /],
      [{ currency: 'usd' }, /^order\.currency must be an ISO 4217 code$/],
      [{ accountId: 'acc-1' }, /^order\.accountId must be a UUID$/],
      [{ id: undefined }, /^order\.id /],
    ];
    for (const [change, problem] of cases) {
      expect([change, settlementShapeProblem(orderReduced(change))]).toEqual([change, expect.stringMatching(problem)]);
    }
    const refuse = refuseUnlessFromOms(signers);
    const signed = orderReduced({ holdAmount: 'lots' });
    expect(refuse({ ...signed, signature: signEvent(signed, oms).signature! })).toMatch(/^order\.holdAmount /);
  });

  it('refuses an unknown type and a payload that names another event', () => {
    expect(settlementShapeProblem({ ...tradeExecuted(), type: 'cash.printed' })).toBe('unknown event type "cash.printed"');
    expect(settlementShapeProblem({ ...tradeExecuted(), eventId: randomUUID() })).toBe('payload.eventId differs from the entry');
  });

  it('a settlement consumer takes only what the OMS signed, in the contract’s shape', () => {
    const refuse = refuseUnlessFromOms(signers);
    const sign = (event: DeliveredEvent): DeliveredEvent => ({ ...event, signature: signEvent(event, oms).signature! });
    expect(refuse(sign(tradeExecuted()))).toBeNull();
    expect(refuse(tradeExecuted())).toBe('unsigned');
    // Signed, yet outside the contract (a bug in the OMS, or a stolen key used carelessly): still refused.
    expect(refuse(sign(tradeExecuted({ quantity: '0' })))).toBe('trade.quantity must be greater than zero');
  });

  it('accepts a funding end state as banking publishes it, and refuses a malformed one naming the field at fault', () => {
    const fundingUpdated = (transaction: Record<string, unknown> = {}, userId: unknown = randomUUID()): DeliveredEvent => {
      const eventId = randomUUID();
      const payload = {
        eventId,
        occurredAt: '2026-11-25T13:00:00.000Z',
        type: 'funding.updated',
        transaction: {
          id: randomUUID(),
          accountId: randomUUID(),
          type: 'DEPOSIT',
          state: 'COMPLETED',
          amount: '250.50',
          currency: 'USD',
          reference: null,
          completedAt: '2026-11-25T13:00:00.000Z',
          ...transaction,
        },
        ...(userId === undefined ? {} : { userId }),
      };
      return { eventId, type: 'funding.updated', payload, entryId: '1-0', payloadJson: JSON.stringify(payload) };
    };
    expect(settlementShapeProblem(fundingUpdated())).toBeNull();
    expect(settlementShapeProblem(fundingUpdated({ type: 'WITHDRAWAL', state: 'REJECTED', rejectReason: 'no' }, null))).toBeNull();
    expect(settlementShapeProblem(fundingUpdated({}, undefined))).toBeNull();
    const cases: Array<[Record<string, unknown>, unknown, RegExp]> = [
      [{ id: 'tx-1' }, randomUUID(), /^transaction\.id must be a UUID$/],
      [{ accountId: undefined }, randomUUID(), /^transaction\.accountId /],
      [{ type: 'TRANSFER' }, randomUUID(), /^transaction\.type /],
      [{ state: 'SETTLED' }, randomUUID(), /^transaction\.state /],
      [{ amount: '-5.00' }, randomUUID(), /^transaction\.amount must be a non-negative decimal/],
      [{ currency: 'usd' }, randomUUID(), /^transaction\.currency must be an ISO 4217 code$/],
      [{}, 'user-1', /^userId must be a UUID$/],
    ];
    for (const [change, userId, problem] of cases) {
      expect([change, settlementShapeProblem(fundingUpdated(change, userId))]).toEqual([change, expect.stringMatching(problem)]);
    }
  });
});
