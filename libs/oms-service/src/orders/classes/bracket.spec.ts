import { parseOrderRequest } from '../order-rules';
import { ACCOUNT, order, refusal, replaceRequest as request, workingLeg as leg } from '../testing/order-fixtures';
import { checkReplaceableClass, parseLegs } from './order-classes';

// BRACKET: an entry whose take-profit and stop-loss wait for it to fill, then cancel each other.
describe('BRACKET: parseLegs', () => {
  const entry = (over: Record<string, unknown> = {}) => parseOrderRequest(order(over));

  it('builds a bracket: both exits on the opposite side, same quantity, waiting for the entry', () => {
    const parent = entry({ quantity: '5' });
    const { orderClass, legs } = parseLegs(
      { orderClass: 'BRACKET', takeProfit: { limitPrice: '200' }, stopLoss: { stopPrice: '180', limitPrice: '179' } },
      parent,
    );
    expect(orderClass).toBe('BRACKET');
    expect(legs.map((l) => [l.leg, l.request.side, l.request.type, l.request.quantity, l.request.timeInForce, l.pending])).toEqual([
      ['TAKE_PROFIT', 'SELL', 'LIMIT', '5', 'DAY', true],
      ['STOP_LOSS', 'SELL', 'STOP_LIMIT', '5', 'DAY', true],
    ]);
    expect(legs[0]!.request).toMatchObject({ accountId: ACCOUNT, symbol: 'AAPL', limitPrice: '200' });
    expect(legs[1]!.request).toMatchObject({ stopPrice: '180', limitPrice: '179' });
  });

  it('puts a sell bracket’s exits on the buy side, take-profit below the stop', () => {
    const parent = entry({ side: 'SELL' });
    const { legs } = parseLegs({ orderClass: 'BRACKET', takeProfit: { limitPrice: '170' }, stopLoss: { stopPrice: '200' } }, parent);
    expect(legs.map((l) => [l.request.side, l.request.type])).toEqual([
      ['BUY', 'LIMIT'],
      ['BUY', 'STOP'],
    ]);
    expect(
      refusal(() => parseLegs({ orderClass: 'BRACKET', takeProfit: { limitPrice: '200' }, stopLoss: { stopPrice: '170' } }, parent)),
    ).toEqual({
      code: 'UNPROCESSABLE',
      field: 'stopLoss.stopPrice',
      message: 'stopLoss.stopPrice must be above the take-profit limit 200 (the legs buy)',
    });
  });

  it('refuses a bracket whose exits cross, or that lacks one', () => {
    const parent = entry();
    expect(
      refusal(() => parseLegs({ orderClass: 'BRACKET', takeProfit: { limitPrice: '180' }, stopLoss: { stopPrice: '180' } }, parent)),
    ).toEqual({
      code: 'UNPROCESSABLE',
      field: 'stopLoss.stopPrice',
      message: 'stopLoss.stopPrice must be below the take-profit limit 180 (the legs sell)',
    });
    expect(refusal(() => parseLegs({ orderClass: 'BRACKET', stopLoss: { stopPrice: '180' } }, parent))).toMatchObject({
      field: 'takeProfit',
      message: 'A BRACKET order needs takeProfit',
    });
    expect(refusal(() => parseLegs({ orderClass: 'BRACKET', takeProfit: { limitPrice: '200' } }, parent))).toMatchObject({
      field: 'stopLoss',
    });
  });

  it('names itself in the group rules it breaks', () => {
    const legs = { orderClass: 'BRACKET', takeProfit: { limitPrice: '200' }, stopLoss: { stopPrice: '180' } };
    expect(refusal(() => parseLegs(legs, entry({ timeInForce: 'IOC' }))).message).toBe(
      'A BRACKET order is DAY or GTC (its legs work after it)',
    );
  });
});

describe('BRACKET: checkReplaceableClass', () => {
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

  it("says why a bracket's entry is refused: its exits are replaced instead", () => {
    expect(refusal(() => checkReplaceableClass(leg({ order_class: 'BRACKET', oco_group_id: null }), request())).message).toBe(
      "A BRACKET order's entry cannot be replaced (its exits can, once it has filled); cancel it and place a new one",
    );
  });
});
