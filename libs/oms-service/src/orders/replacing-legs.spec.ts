import { AppError } from '@trading/errors';
import type { ReplaceRequest } from './order-rules';
import type { OrderRow } from './order-store';
import { checkReplaceableClass, replaceUnderWay } from './replacing-legs';

// Which orders a replace may take, and which legs count as being replaced, as pure functions.
const leg = (over: Partial<OrderRow> = {}): OrderRow =>
  ({
    id: 'leg',
    order_class: 'OCO',
    side: 'BUY',
    status: 'NEW',
    time_in_force: 'GTC',
    oco_group_id: 'pair',
    parent_order_id: null,
    leg: null,
    replaced_by_order_id: null,
    ...over,
  }) as OrderRow;

const request = (over: Partial<ReplaceRequest> = {}): ReplaceRequest => ({
  accountId: 'account',
  orderId: 'leg',
  quantity: null,
  limitPrice: '170',
  stopPrice: null,
  timeInForce: null,
  trailPrice: null,
  trailPercent: null,
  clientOrderId: null,
  ...over,
});

function refusal(run: () => unknown): { code: string; field: string | undefined; message: string } {
  try {
    run();
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { code: err.code, field: err.field, message: err.message };
  }
  throw new Error('expected a refusal');
}

describe('checkReplaceableClass', () => {
  it("takes a buy pair's legs (an OCO's and a bracket's exits) at a new price, as a sell pair's", () => {
    for (const side of ['BUY', 'SELL'] as const) {
      expect(() => checkReplaceableClass(leg({ side }), request())).not.toThrow();
      expect(() => checkReplaceableClass(leg({ side, leg: 'STOP_LOSS' }), request({ limitPrice: null, stopPrice: '200' }))).not.toThrow();
      expect(() => checkReplaceableClass(leg({ side, order_class: 'BRACKET', leg: 'TAKE_PROFIT' }), request())).not.toThrow();
      // The same time in force again is no change to refuse.
      expect(() => checkReplaceableClass(leg({ side }), request({ timeInForce: 'GTC' }))).not.toThrow();
    }
  });

  it("refuses a new quantity or time in force on a pair's leg, naming the field and the pair's side", () => {
    expect(refusal(() => checkReplaceableClass(leg(), request({ quantity: '5' })))).toEqual({
      code: 'UNPROCESSABLE',
      field: 'quantity',
      message: "A OCO order's legs buy one quantity together: replace their prices, or cancel it and place a new one",
    });
    expect(refusal(() => checkReplaceableClass(leg({ side: 'SELL', order_class: 'BRACKET' }), request({ quantity: '5' })))).toEqual({
      code: 'UNPROCESSABLE',
      field: 'quantity',
      message: "A BRACKET order's legs sell one quantity together: replace their prices, or cancel it and place a new one",
    });
    expect(refusal(() => checkReplaceableClass(leg(), request({ timeInForce: 'DAY' })))).toEqual({
      code: 'UNPROCESSABLE',
      field: 'timeInForce',
      message: "A OCO order's leg keeps the group's time in force (GTC)",
    });
  });

  it("refuses a bracket's entry and a group order outside a pair, naming orderId", () => {
    expect(refusal(() => checkReplaceableClass(leg({ order_class: 'BRACKET', oco_group_id: null }), request()))).toMatchObject({
      code: 'UNPROCESSABLE',
      field: 'orderId',
    });
    expect(refusal(() => checkReplaceableClass(leg({ oco_group_id: null }), request()))).toMatchObject({
      code: 'UNPROCESSABLE',
      field: 'orderId',
      message: "A OCO order's legs cannot be replaced; cancel it and place a new one",
    });
  });
});

describe('replaceUnderWay', () => {
  it('is a replacement waiting for its hold, or an open leg frozen by one; not a leg closed or working on its own', () => {
    expect(replaceUnderWay(leg({ status: 'ACCEPTED' }))).toBe(true);
    expect(replaceUnderWay(leg({ status: 'NEW', replaced_by_order_id: 'next' }))).toBe(true);
    expect(replaceUnderWay(leg({ status: 'PARTIALLY_FILLED', replaced_by_order_id: 'next' }))).toBe(true);
    expect(replaceUnderWay(leg({ status: 'NEW' }))).toBe(false);
    expect(replaceUnderWay(leg({ status: 'PARTIALLY_FILLED' }))).toBe(false);
    expect(replaceUnderWay(leg({ status: 'PENDING' }))).toBe(false);
    // A replaced leg once its replace finished (CANCELLED), a refused replacement (REJECTED).
    for (const status of ['CANCELLED', 'REJECTED', 'FILLED', 'EXPIRED'] as const) {
      expect(replaceUnderWay(leg({ status, replaced_by_order_id: 'next' }))).toBe(false);
      expect(replaceUnderWay(leg({ status }))).toBe(false);
    }
  });
});
