import type { OrderRow } from '../order-store';
import { parseOrderRequest } from '../order-rules';
import { instrument, order, refusal, replaceRequest as request, workingLeg } from '../testing/order-fixtures';
import { trailingStop, trailOf, withTrailingStop } from './trailing-stop';

// TRAILING_STOP: a stop that trails the best price by a distance or a percentage.
describe('trailing stops', () => {
  const trailing = (over: Record<string, unknown>) => order({ type: 'TRAILING_STOP', limitPrice: undefined, side: 'SELL', ...over });

  it('take exactly one of trailPrice and trailPercent', () => {
    expect(parseOrderRequest(trailing({ trailPrice: '1.50' }))).toMatchObject({ trailPrice: '1.5', stopPrice: null });
    expect(parseOrderRequest(trailing({ trailPercent: '2' })).trailPercent).toBe('2');
    expect(parseOrderRequest(trailing({ trailPercent: '2' })).trailPrice).toBeUndefined();
    expect(parseOrderRequest(trailing({ trailPrice: null, trailPercent: '2', timeInForce: 'GTC' }))).toMatchObject({
      trailPercent: '2',
      timeInForce: 'GTC',
    });
    expect(refusal(() => parseOrderRequest(trailing({})))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'trailPrice' });
    expect(refusal(() => parseOrderRequest(trailing({ trailPrice: '1', trailPercent: '2' })))).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'trailPercent',
    });
  });

  it('refuse a trail of 100 % or more, or a bad amount', () => {
    expect(parseOrderRequest(trailing({ trailPercent: '99.99' })).trailPercent).toBe('99.99');
    expect(refusal(() => parseOrderRequest(trailing({ trailPercent: '100' })))).toMatchObject({ field: 'trailPercent' });
    expect(refusal(() => parseOrderRequest(trailing({ trailPrice: '0' })))).toMatchObject({ field: 'trailPrice' });
    expect(refusal(() => parseOrderRequest(trailing({ trailPercent: '-1' })))).toMatchObject({ field: 'trailPercent' });
    expect(refusal(() => parseOrderRequest(trailing({ trailPrice: '1', timeInForce: 'IOC' })))).toMatchObject({
      code: 'UNPROCESSABLE',
      field: 'timeInForce',
    });
  });

  it('trail the water mark on the tick: below for a sell, above for a buy', () => {
    expect(trailingStop('SELL', '100.00', { price: '1.005' }, '0.01').toFixed()).toBe('98.99');
    expect(trailingStop('BUY', '100.00', { price: '1.005' }, '0.01').toFixed()).toBe('101.01');
    expect(trailingStop('SELL', '100.00', { percent: '2.5' }, '0.01').toFixed()).toBe('97.5');
    expect(trailingStop('BUY', '100.00', { percent: '2.5', price: null }, '0.05').toFixed()).toBe('102.5');
    expect(trailingStop('BUY', '100.01', { percent: '1' }, '0.05').toFixed()).toBe('101.05');
  });
});

describe('withTrailingStop', () => {
  const trailing = (over: Record<string, unknown>) =>
    parseOrderRequest(order({ type: 'TRAILING_STOP', limitPrice: undefined, side: 'SELL', timeInForce: 'GTC', ...over }));

  it('sets a trailing stop’s first stop from the last price, and leaves other orders alone', () => {
    const aapl = instrument({ lastPrice: '100.00' });
    expect(withTrailingStop(trailing({ trailPrice: '2.50' }), aapl)).toMatchObject({ stopPrice: '97.5', trailPrice: '2.5' });
    expect(withTrailingStop(trailing({ trailPercent: '10', side: 'BUY' }), aapl).stopPrice).toBe('110');
    const limit = parseOrderRequest(order());
    expect(withTrailingStop(limit, aapl)).toBe(limit);
  });

  it('refuses a trail as wide as the price, naming the trail given', () => {
    const cheap = instrument({ lastPrice: '2.00' });
    expect(refusal(() => withTrailingStop(trailing({ trailPrice: '2.00' }), cheap))).toEqual({
      code: 'UNPROCESSABLE',
      field: 'trailPrice',
      message: 'The trail is wider than the price 2.00',
    });
    expect(refusal(() => withTrailingStop(trailing({ trailPercent: '99.999' }), instrument({ lastPrice: '0.01' })))).toMatchObject({
      field: 'trailPercent',
    });
    expect(withTrailingStop(trailing({ trailPrice: '1.99' }), cheap).stopPrice).toBe('0.01');
  });
});

describe('trailOf', () => {
  const stop = (over: Partial<OrderRow>) =>
    workingLeg({ order_class: 'SIMPLE', oco_group_id: null, type: 'TRAILING_STOP', trail_price: null, trail_percent: null, ...over });
  const noTrail = request({ limitPrice: null, quantity: '5' });

  it("takes the replace's trail, dropping the other, else keeps the order's", () => {
    expect(trailOf(stop({ trail_percent: '2.0000' }), request({ trailPrice: '1.5' }))).toStrictEqual({ trailPrice: '1.5' });
    expect(trailOf(stop({ trail_price: '1.50' }), request({ trailPercent: '3' }))).toStrictEqual({ trailPercent: '3' });
    expect(trailOf(stop({ trail_price: '1.50000000' }), noTrail)).toEqual({ trailPrice: '1.5', trailPercent: undefined });
    expect(trailOf(stop({ trail_percent: '2.50' }), noTrail)).toEqual({ trailPrice: undefined, trailPercent: '2.5' });
  });
});
