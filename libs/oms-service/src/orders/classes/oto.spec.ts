import { parseOrderRequest } from '../order-rules';
import { order, refusal, replaceRequest as request, workingLeg as leg } from '../testing/order-fixtures';
import { checkReplaceableClass, parseLegs } from './order-classes';

// OTO: an entry and one child that waits for it to fill.
describe('OTO: parseLegs', () => {
  const entry = (over: Record<string, unknown> = {}) => parseOrderRequest(order(over));

  it('builds an OTO with exactly one child', () => {
    const { orderClass, legs } = parseLegs({ orderClass: 'OTO', stopLoss: { stopPrice: '180' } }, entry());
    expect(orderClass).toBe('OTO');
    expect(legs.map((l) => [l.leg, l.request.side, l.request.type, l.pending])).toEqual([['STOP_LOSS', 'SELL', 'STOP', true]]);
    const takeProfitOnly = parseLegs({ orderClass: 'OTO', takeProfit: { limitPrice: '200' }, stopLoss: null }, entry());
    expect(takeProfitOnly.legs.map((l) => [l.leg, l.request.type, l.request.limitPrice])).toEqual([['TAKE_PROFIT', 'LIMIT', '200']]);
    const stopWithoutLimit = parseLegs({ orderClass: 'OTO', stopLoss: { stopPrice: '180', limitPrice: null } }, entry());
    expect(stopWithoutLimit.legs[0]!.request.type).toBe('STOP');
    expect(refusal(() => parseLegs({ orderClass: 'OTO' }, entry()))).toMatchObject({ field: 'takeProfit' });
    expect(
      refusal(() => parseLegs({ orderClass: 'OTO', takeProfit: { limitPrice: '200' }, stopLoss: { stopPrice: '180' } }, entry())),
    ).toMatchObject({ field: 'stopLoss' });
  });

  it('names itself in the group rules it breaks', () => {
    expect(refusal(() => parseLegs({ orderClass: 'OTO', stopLoss: { stopPrice: '180' } }, entry({ timeInForce: 'FOK' })))).toEqual({
      code: 'UNPROCESSABLE',
      field: 'timeInForce',
      message: 'A OTO order is DAY or GTC (its legs work after it)',
    });
  });
});

describe('OTO: checkReplaceableClass', () => {
  it("replaces an OTO's child as an order of its own, and refuses its entry, naming orderId", () => {
    const child = leg({ order_class: 'OTO', oco_group_id: null, parent_order_id: 'entry', leg: 'STOP_LOSS' });
    expect(() => checkReplaceableClass(child, request({ quantity: '5', timeInForce: 'DAY' }))).not.toThrow();
    expect(refusal(() => checkReplaceableClass(leg({ order_class: 'OTO', oco_group_id: null }), request()))).toEqual({
      code: 'UNPROCESSABLE',
      field: 'orderId',
      message: "An OTO order's entry cannot be replaced (its child can, once it works); cancel it and place a new one",
    });
  });
});
