import { parseOrderRequest } from '../order-rules';
import { order, refusal } from '../testing/order-fixtures';
import { parseLegs } from './order-classes';

// OCO: a limit and a stop on the same side, working at once and cancelling each other.
describe('OCO: parseLegs', () => {
  const entry = (over: Record<string, unknown> = {}) => parseOrderRequest(order(over));

  it('builds an OCO from a LIMIT order and a stop on the same side, both working at once', () => {
    const parent = entry({ side: 'SELL', limitPrice: '200' });
    const { orderClass, legs } = parseLegs({ orderClass: 'OCO', stopLoss: { stopPrice: '180' } }, parent);
    expect(orderClass).toBe('OCO');
    expect(legs.map((l) => [l.leg, l.request.side, l.request.type, l.pending])).toEqual([['STOP_LOSS', 'SELL', 'STOP', false]]);
    expect(refusal(() => parseLegs({ orderClass: 'OCO', stopLoss: { stopPrice: '210' } }, parent))).toMatchObject({
      field: 'stopLoss.stopPrice',
    });
    expect(refusal(() => parseLegs({ orderClass: 'OCO' }, parent))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'stopLoss' });
    expect(refusal(() => parseLegs({ orderClass: 'OCO', stopLoss: { stopPrice: '-1' } }, parent))).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'stopLoss.stopPrice',
    });
    expect(
      refusal(() => parseLegs({ orderClass: 'OCO', takeProfit: { limitPrice: '1' }, stopLoss: { stopPrice: '180' } }, parent)),
    ).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'takeProfit',
    });
    const stopEntry = entry({ type: 'STOP', limitPrice: undefined, stopPrice: '150' });
    expect(refusal(() => parseLegs({ orderClass: 'OCO', stopLoss: { stopPrice: '140' } }, stopEntry))).toMatchObject({
      code: 'UNPROCESSABLE',
      field: 'type',
    });
  });

  it('names itself in the group rules it breaks', () => {
    const trailing = entry({ type: 'TRAILING_STOP', limitPrice: undefined, trailPrice: '1' });
    expect(refusal(() => parseLegs({ orderClass: 'OCO', stopLoss: { stopPrice: '180' } }, trailing))).toEqual({
      code: 'UNPROCESSABLE',
      field: 'type',
      message: 'A OCO order cannot be a TRAILING_STOP',
    });
  });
});
