import { parseOrderRequest } from '../order-rules';
import { order, refusal, replaceRequest as request, workingLeg as leg } from '../testing/order-fixtures';
import { checkReplaceableClass, parseLegs } from './order-classes';

// SIMPLE: one order with no legs, the class an order has unless it names another.
describe('SIMPLE: parseLegs', () => {
  const entry = (over: Record<string, unknown> = {}) => parseOrderRequest(order(over));

  it('is SIMPLE with no legs unless a class is given, and refuses exits on a SIMPLE order', () => {
    expect(parseLegs({}, entry())).toEqual({ orderClass: 'SIMPLE', legs: [] });
    expect(parseLegs({ orderClass: 'SIMPLE' }, entry())).toEqual({ orderClass: 'SIMPLE', legs: [] });
    expect(parseLegs({ orderClass: null, takeProfit: null, stopLoss: null }, entry())).toEqual({ orderClass: 'SIMPLE', legs: [] });
    expect(refusal(() => parseLegs({ takeProfit: { limitPrice: '200' } }, entry()))).toMatchObject({ field: 'takeProfit' });
    expect(refusal(() => parseLegs({ stopLoss: { stopPrice: '180' } }, entry()))).toMatchObject({ field: 'stopLoss' });
    expect(refusal(() => parseLegs({ orderClass: 'LADDER' }, entry()))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'orderClass' });
  });
});

describe('SIMPLE: checkReplaceableClass', () => {
  it('replaces a SIMPLE order as an order of its own: a new quantity and time in force too', () => {
    const simple = leg({ order_class: 'SIMPLE', oco_group_id: null });
    expect(() => checkReplaceableClass(simple, request({ quantity: '5', timeInForce: 'DAY' }))).not.toThrow();
  });
});
