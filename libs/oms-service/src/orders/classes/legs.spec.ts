import { parseOrderRequest } from '../order-rules';
import { order, refusal, replaceRequest as request, workingLeg as leg } from '../testing/order-fixtures';
import { checkReplacedLegPrices } from './legs';
import { checkReplaceableClass, parseLegs } from './order-classes';

// What the classes share: a group's entry, a leg read as an order of its own, a pair's prices and replaces.
describe('legs: parseLegs', () => {
  const entry = (over: Record<string, unknown> = {}) => parseOrderRequest(order(over));

  it('names a leg’s own fields by their path, and refuses fields a leg does not have', () => {
    const parent = entry();
    expect(refusal(() => parseLegs({ orderClass: 'OTO', takeProfit: { limitPrice: '-1' } }, parent))).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'takeProfit.limitPrice',
    });
    expect(refusal(() => parseLegs({ orderClass: 'OTO', takeProfit: { stopPrice: '1' } }, parent))).toMatchObject({
      field: 'takeProfit.stopPrice',
    });
    expect(refusal(() => parseLegs({ orderClass: 'OTO', stopLoss: { quantity: '1' } }, parent))).toMatchObject({
      field: 'stopLoss.quantity',
    });
    expect(refusal(() => parseLegs({ orderClass: 'OTO', stopLoss: ['x'] }, parent))).toMatchObject({ field: 'stopLoss' });
    expect(refusal(() => parseLegs({ orderClass: 'OTO', stopLoss: 'x' }, parent))).toMatchObject({ field: 'stopLoss' });
  });

  it('keeps grouped orders to DAY or GTC and away from trailing stops', () => {
    const legs = { orderClass: 'BRACKET', takeProfit: { limitPrice: '200' }, stopLoss: { stopPrice: '180' } };
    expect(refusal(() => parseLegs(legs, entry({ timeInForce: 'IOC' })))).toMatchObject({ code: 'UNPROCESSABLE', field: 'timeInForce' });
    expect(refusal(() => parseLegs(legs, entry({ timeInForce: 'FOK' })))).toMatchObject({ code: 'UNPROCESSABLE', field: 'timeInForce' });
    expect(parseLegs(legs, entry({ timeInForce: 'GTC' })).legs.map((l) => l.request.timeInForce)).toEqual(['GTC', 'GTC']);
    const trailing = entry({ type: 'TRAILING_STOP', limitPrice: undefined, trailPrice: '1' });
    expect(refusal(() => parseLegs(legs, trailing))).toMatchObject({ code: 'UNPROCESSABLE', field: 'type' });
  });

  it('refuses a takeProfit that is not an object, naming it', () => {
    const stopLoss = { stopPrice: '180' };
    expect(refusal(() => parseLegs({ orderClass: 'BRACKET', takeProfit: '200', stopLoss }, entry()))).toEqual({
      code: 'BAD_USER_INPUT',
      field: 'takeProfit',
      message: 'takeProfit must be an object',
    });
  });
});

describe('checkReplacedLegPrices', () => {
  it("keeps a sell pair's take-profit above its stop, naming the replaced leg's field", () => {
    expect(() => checkReplacedLegPrices('SELL', 'TAKE_PROFIT', '210', '140')).not.toThrow();
    expect(refusal(() => checkReplacedLegPrices('SELL', 'TAKE_PROFIT', '140', '140'))).toMatchObject({
      code: 'UNPROCESSABLE',
      field: 'limitPrice',
      message: 'limitPrice must be above the stop-loss stop 140 (the legs sell)',
    });
    expect(refusal(() => checkReplacedLegPrices('SELL', 'STOP_LOSS', '210', '211'))).toMatchObject({
      code: 'UNPROCESSABLE',
      field: 'stopPrice',
      message: 'stopPrice must be below the take-profit limit 210 (the legs sell)',
    });
    expect(() => checkReplacedLegPrices('BUY', 'STOP_LOSS', '140', '210')).not.toThrow();
    expect(refusal(() => checkReplacedLegPrices('BUY', 'TAKE_PROFIT', '215', '210'))).toMatchObject({
      field: 'limitPrice',
      message: 'limitPrice must be below the stop-loss stop 210 (the legs buy)',
    });
    expect(refusal(() => checkReplacedLegPrices('BUY', 'STOP_LOSS', '140', '139'))).toMatchObject({
      field: 'stopPrice',
      message: 'stopPrice must be above the take-profit limit 140 (the legs buy)',
    });
    // A buy pair's legs at one price are refused too: the limit must lie strictly below the stop.
    expect(refusal(() => checkReplacedLegPrices('BUY', 'TAKE_PROFIT', '210', '210'))).toMatchObject({
      code: 'UNPROCESSABLE',
      field: 'limitPrice',
    });
    expect(refusal(() => checkReplacedLegPrices('BUY', 'STOP_LOSS', '140', '140'))).toMatchObject({
      code: 'UNPROCESSABLE',
      field: 'stopPrice',
    });
  });
});

describe("a pair's legs: checkReplaceableClass", () => {
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
});
