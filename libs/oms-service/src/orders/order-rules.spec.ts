import { AppError } from '@trading/errors';
import { commissionOn, fillAmounts } from './money';
import {
  ceilToTick,
  checkInstrumentRules,
  checkPriceBand,
  floorToLot,
  parseCloseRequest,
  parseOrderRequest,
  parseReplaceRequest,
  prefixed,
  type OrderRequest,
} from './order-rules';
import { ACCOUNT, instrument, order, refusal } from './testing/order-fixtures';

// The order rules as pure functions: each refusal is pinned by its code and the field it names,
// so a rule that loosens or names the wrong field fails here, not only in an end-to-end run.
// The order classes' own rules (their legs, their replaces, trailing stops) are pinned beside them in classes/.
const ORDER = '00000000-0000-4000-8000-000000000002';

describe('parseOrderRequest', () => {
  it('normalises a valid order and keeps its client id', () => {
    expect(parseOrderRequest(order({ quantity: '10.50', clientOrderId: 'my-1:a.b_c' }))).toEqual({
      accountId: ACCOUNT,
      symbol: 'AAPL',
      side: 'BUY',
      type: 'LIMIT',
      timeInForce: 'DAY',
      quantity: '10.5',
      limitPrice: '189.5',
      stopPrice: null,
      clientOrderId: 'my-1:a.b_c',
    });
    expect(parseOrderRequest(order({ clientOrderId: null })).clientOrderId).toBeNull();
  });

  it.each([
    ['type', { type: 'ICEBERG' }, 'BAD_USER_INPUT'],
    ['side', { side: 'SHORT' }, 'BAD_USER_INPUT'],
    ['timeInForce', { timeInForce: 'GTD' }, 'BAD_USER_INPUT'],
    ['symbol', { symbol: 'aapl' }, 'BAD_USER_INPUT'],
    ['symbol', { symbol: 'ABCDEFGHIJKLM' }, 'BAD_USER_INPUT'],
    ['symbol', { symbol: 7 }, 'BAD_USER_INPUT'],
    ['quantity', { quantity: '0' }, 'BAD_USER_INPUT'],
    ['quantity', { quantity: '-1' }, 'BAD_USER_INPUT'],
    ['quantity', { quantity: 10 }, 'BAD_USER_INPUT'],
    ['quantity', { quantity: '1.123456789' }, 'BAD_USER_INPUT'],
    ['quantity', { quantity: '1e3' }, 'BAD_USER_INPUT'],
    ['quantity', { quantity: '1234567890123' }, 'BAD_USER_INPUT'],
    ['accountId', { accountId: 'not-a-uuid' }, 'BAD_USER_INPUT'],
    ['clientOrderId', { clientOrderId: 'has space' }, 'BAD_USER_INPUT'],
    ['clientOrderId', { clientOrderId: 'x'.repeat(65) }, 'BAD_USER_INPUT'],
    ['clientOrderId', { clientOrderId: 42 }, 'BAD_USER_INPUT'],
    ['limitPrice', { limitPrice: undefined }, 'BAD_USER_INPUT'],
    ['stopPrice', { stopPrice: '180' }, 'BAD_USER_INPUT'],
    ['limitPrice', { type: 'MARKET' }, 'BAD_USER_INPUT'],
    ['stopPrice', { type: 'STOP', limitPrice: undefined }, 'BAD_USER_INPUT'],
    ['trailPrice', { trailPrice: '1' }, 'BAD_USER_INPUT'],
    ['trailPercent', { trailPercent: '1' }, 'BAD_USER_INPUT'],
    ['timeInForce', { type: 'MARKET', limitPrice: undefined, timeInForce: 'GTC' }, 'UNPROCESSABLE'],
    ['timeInForce', { type: 'STOP', limitPrice: undefined, stopPrice: '180', timeInForce: 'IOC' }, 'UNPROCESSABLE'],
    ['timeInForce', { type: 'STOP_LIMIT', stopPrice: '180', timeInForce: 'FOK' }, 'UNPROCESSABLE'],
  ])('refuses a bad %s (%j)', (field, over, code) => {
    const r = refusal(() => parseOrderRequest(order(over)));
    expect({ code: r.code, field: r.field }).toEqual({ code, field });
  });

  it('says why in words a developer can act on', () => {
    expect(refusal(() => parseOrderRequest(order({ limitPrice: undefined }))).message).toBe('limitPrice is required for LIMIT orders');
    expect(refusal(() => parseOrderRequest(order({ type: 'MARKET' }))).message).toBe('limitPrice is not allowed for MARKET orders');
    expect(refusal(() => parseOrderRequest(order({ quantity: '0' }))).message).toBe('quantity must be greater than zero');
    expect(refusal(() => parseOrderRequest(order({ type: 'MARKET', limitPrice: undefined, timeInForce: 'GTC' }))).message).toBe(
      'timeInForce GTC is not allowed for MARKET orders (allowed: DAY, IOC, FOK)',
    );
    expect(refusal(() => parseOrderRequest(order({ side: 'X' }))).message).toBe('side must be one of BUY, SELL');
  });

  it('takes each order type with exactly the prices it needs and the times in force it allows', () => {
    const market = parseOrderRequest(order({ type: 'MARKET', limitPrice: null, timeInForce: 'IOC' }));
    expect([market.limitPrice, market.stopPrice, market.timeInForce]).toEqual([null, null, 'IOC']);
    expect(parseOrderRequest(order({ type: 'MARKET', limitPrice: undefined, timeInForce: 'FOK' })).timeInForce).toBe('FOK');
    const stop = parseOrderRequest(order({ type: 'STOP', limitPrice: undefined, stopPrice: '180.00', timeInForce: 'GTC' }));
    expect([stop.limitPrice, stop.stopPrice]).toEqual([null, '180']);
    const stopLimit = parseOrderRequest(order({ type: 'STOP_LIMIT', stopPrice: '180', limitPrice: '179' }));
    expect([stopLimit.limitPrice, stopLimit.stopPrice]).toEqual(['179', '180']);
    expect(parseOrderRequest(order({ timeInForce: 'GTC' })).timeInForce).toBe('GTC');
    expect(parseOrderRequest(order({ timeInForce: 'IOC' })).timeInForce).toBe('IOC');
    expect(parseOrderRequest(order({ timeInForce: 'FOK' })).timeInForce).toBe('FOK');
    expect(parseOrderRequest(order({ type: 'STOP_LIMIT', stopPrice: '180', timeInForce: 'GTC' })).timeInForce).toBe('GTC');
    expect(parseOrderRequest(order({ type: 'STOP', limitPrice: null, stopPrice: '180', trailPrice: null })).trailPrice).toBeUndefined();
    expect(parseOrderRequest(order({ symbol: 'BRK.B1' })).symbol).toBe('BRK.B1');
    expect(parseOrderRequest(order({ quantity: '123456789012.12345678' })).quantity).toBe('123456789012.12345678');
  });
});

describe('prefixed', () => {
  it('names a child’s field by its path, once', () => {
    const err = prefixed(new AppError('BAD_USER_INPUT', 'limitPrice is required', { field: 'limitPrice' }), 'takeProfit') as AppError;
    expect([err.code, err.field, err.message]).toEqual(['BAD_USER_INPUT', 'takeProfit.limitPrice', 'takeProfit.limitPrice is required']);
    const already = new AppError('UNPROCESSABLE', 'x', { field: 'stopLoss.stopPrice' });
    expect(prefixed(already, 'takeProfit')).toBe(already);
    const noField = new AppError('UNPROCESSABLE', 'x');
    expect(prefixed(noField, 'takeProfit')).toBe(noField);
    const other = new Error('boom');
    expect(prefixed(other, 'takeProfit')).toBe(other);
  });
});

describe('parseCloseRequest', () => {
  const close = (over: Record<string, unknown> = {}) => ({ accountId: ACCOUNT, symbol: 'AAPL', ...over });

  it('closes all, a quantity, or a percentage of at most 100', () => {
    expect(parseCloseRequest(close())).toEqual({ accountId: ACCOUNT, symbol: 'AAPL', quantity: null, percentage: null });
    expect(parseCloseRequest(close({ quantity: '3.0' }))).toMatchObject({ quantity: '3', percentage: null });
    expect(parseCloseRequest(close({ percentage: '100' }))).toMatchObject({ quantity: null, percentage: '100' });
    expect(parseCloseRequest(close({ quantity: null, percentage: '50' }))).toMatchObject({ quantity: null, percentage: '50' });
  });

  it.each([
    ['percentage', { quantity: '1', percentage: '50' }],
    ['percentage', { percentage: '100.01' }],
    ['percentage', { percentage: '0' }],
    ['quantity', { quantity: '0' }],
    ['symbol', { symbol: 'a b' }],
    ['symbol', { symbol: 5 }],
    ['accountId', { accountId: '1' }],
  ])('refuses a bad %s (%j)', (field, over) => {
    expect(refusal(() => parseCloseRequest(close(over)))).toMatchObject({ code: 'BAD_USER_INPUT', field });
  });
});

describe('parseReplaceRequest', () => {
  const replace = (over: Record<string, unknown>) => ({ accountId: ACCOUNT, orderId: ORDER, ...over });

  it('takes what changes and leaves the rest null', () => {
    expect(parseReplaceRequest(replace({ quantity: '7' }))).toEqual({
      accountId: ACCOUNT,
      orderId: ORDER,
      quantity: '7',
      limitPrice: null,
      stopPrice: null,
      timeInForce: null,
      trailPrice: null,
      trailPercent: null,
      clientOrderId: null,
    });
    expect(parseReplaceRequest(replace({ limitPrice: '1.10' })).limitPrice).toBe('1.1');
    expect(parseReplaceRequest(replace({ stopPrice: '2' })).stopPrice).toBe('2');
    expect(parseReplaceRequest(replace({ timeInForce: 'GTC' })).timeInForce).toBe('GTC');
  });

  it('refuses an empty change and bad values by field', () => {
    expect(refusal(() => parseReplaceRequest(replace({})))).toMatchObject({ code: 'UNPROCESSABLE', field: 'body' });
    expect(refusal(() => parseReplaceRequest(replace({ quantity: null })))).toMatchObject({ code: 'UNPROCESSABLE', field: 'body' });
    expect(refusal(() => parseReplaceRequest(replace({ quantity: '0' })))).toMatchObject({ field: 'quantity' });
    expect(refusal(() => parseReplaceRequest(replace({ limitPrice: 'x' })))).toMatchObject({ field: 'limitPrice' });
    expect(refusal(() => parseReplaceRequest(replace({ stopPrice: '-2' })))).toMatchObject({ field: 'stopPrice' });
    expect(refusal(() => parseReplaceRequest(replace({ timeInForce: 'NOW' })))).toMatchObject({ field: 'timeInForce' });
    expect(refusal(() => parseReplaceRequest(replace({ orderId: 'x', quantity: '1' })))).toMatchObject({ field: 'orderId' });
    expect(refusal(() => parseReplaceRequest(replace({ accountId: 'x', quantity: '1' })))).toMatchObject({ field: 'accountId' });
  });

  it('takes a new trail, one of trailPrice and trailPercent, which alone is a change', () => {
    expect(parseReplaceRequest(replace({ trailPercent: '2.50' }))).toMatchObject({ trailPercent: '2.5', trailPrice: null });
    expect(parseReplaceRequest(replace({ trailPrice: '1.5' }))).toMatchObject({ trailPrice: '1.5', trailPercent: null });
    expect(refusal(() => parseReplaceRequest(replace({ trailPrice: '1', trailPercent: '2' })))).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'trailPercent',
    });
    expect(refusal(() => parseReplaceRequest(replace({ trailPercent: '100' })))).toMatchObject({ field: 'trailPercent' });
    expect(parseReplaceRequest(replace({ trailPercent: '99.99' })).trailPercent).toBe('99.99');
    expect(refusal(() => parseReplaceRequest(replace({ trailPrice: '0' })))).toMatchObject({ field: 'trailPrice' });
  });

  it('takes a clientOrderId checked as placing checks it, which alone changes nothing', () => {
    expect(parseReplaceRequest(replace({ quantity: '1', clientOrderId: 'my-order.2' })).clientOrderId).toBe('my-order.2');
    expect(refusal(() => parseReplaceRequest(replace({ quantity: '1', clientOrderId: 'bad id' })))).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'clientOrderId',
      message: 'clientOrderId must be 1 to 64 characters of A-Z a-z 0-9 . _ : -',
    });
    expect(refusal(() => parseReplaceRequest(replace({ quantity: '1', clientOrderId: 'x'.repeat(65) })))).toMatchObject({
      field: 'clientOrderId',
    });
    expect(refusal(() => parseReplaceRequest(replace({ clientOrderId: 'only-this' })))).toMatchObject({
      code: 'UNPROCESSABLE',
      field: 'body',
    });
  });
});

describe('checkInstrumentRules', () => {
  const request = (over: Partial<OrderRequest> = {}) => ({ ...parseOrderRequest(order({ limitPrice: '100.00' })), ...over });

  it('passes an order in whole lots, within the limits, on the tick', () => {
    const aapl = instrument();
    expect(checkInstrumentRules(request(), aapl)).toBe(aapl);
    expect(checkInstrumentRules(request({ quantity: '1' }), aapl)).toBe(aapl);
    expect(checkInstrumentRules(request({ quantity: '1000' }), aapl)).toBe(aapl);
    expect(checkInstrumentRules(request({ quantity: '0.5' }), instrument({ lotSize: '0.5', minQuantity: '0.5' }))).toBeTruthy();
  });

  it.each([
    ['symbol', {}, null, 'Unknown symbol AAPL'],
    ['symbol', {}, { tradable: false }, 'AAPL is halted: it takes no new orders until trading resumes'],
    ['quantity', { quantity: '1.5' }, {}, 'quantity must be a whole multiple of the lot size 1 (no fractional quantities)'],
    ['quantity', { quantity: '0.3' }, { lotSize: '0.2', minQuantity: '0.2' }, 'quantity must be a whole multiple of the lot size 0.2'],
    ['quantity', { quantity: '4' }, { minQuantity: '5' }, 'quantity must be at least 5'],
    ['quantity', { quantity: '1001' }, {}, 'quantity must be at most 1000'],
    ['limitPrice', { limitPrice: '100.005' }, {}, 'limitPrice must be a multiple of the tick size 0.01'],
    ['stopPrice', { stopPrice: '99.999' }, {}, 'stopPrice must be a multiple of the tick size 0.01'],
    ['trailPrice', { trailPrice: '0.015' }, {}, 'trailPrice must be a multiple of the tick size 0.01'],
  ])('refuses by %s: %j on %j', (field, over, inst, message) => {
    const r = refusal(() => checkInstrumentRules(request(over as Partial<OrderRequest>), inst === null ? null : instrument(inst)));
    expect(r).toEqual({ code: 'UNPROCESSABLE', field, message });
  });
});

describe('checkPriceBand', () => {
  const request = (over: Partial<OrderRequest>) => ({ ...parseOrderRequest(order()), limitPrice: null, stopPrice: null, ...over });
  const aapl = instrument({ lastPrice: '100.00' });

  it('passes prices on the band’s edges and within it', () => {
    for (const limitPrice of ['50', '100', '150']) expect(() => checkPriceBand(request({ limitPrice }), aapl, '0.5')).not.toThrow();
    expect(() => checkPriceBand(request({ stopPrice: '150' }), aapl, '0.5')).not.toThrow();
    expect(() => checkPriceBand(request({}), aapl, '0.5')).not.toThrow();
  });

  it('refuses a limit or stop outside the band, naming the range', () => {
    expect(refusal(() => checkPriceBand(request({ limitPrice: '49.99' }), aapl, '0.5'))).toEqual({
      code: 'UNPROCESSABLE',
      field: 'limitPrice',
      message: 'limitPrice must be within 50% of the last price 100 (50 to 150)',
    });
    expect(refusal(() => checkPriceBand(request({ stopPrice: '150.01' }), aapl, '0.5'))).toMatchObject({ field: 'stopPrice' });
    expect(refusal(() => checkPriceBand(request({ limitPrice: '111' }), aapl, '0.1'))).toMatchObject({ field: 'limitPrice' });
    expect(refusal(() => checkPriceBand(request({ limitPrice: '89' }), aapl, '0.1'))).toMatchObject({ field: 'limitPrice' });
  });
});

describe('ticks and lots', () => {
  it('rounds prices up to the tick and quantities down to the lot', () => {
    expect(ceilToTick('100.001', '0.01').toFixed()).toBe('100.01');
    expect(ceilToTick('100.00', '0.05').toFixed()).toBe('100');
    expect(floorToLot('7.9', '1').toFixed()).toBe('7');
    expect(floorToLot('7.9', '0.5').toFixed()).toBe('7.5');
  });
});

describe('commission', () => {
  const schedule = { rate: '0.001', minimum: '1.00' };

  it('charges the rate on the traded value, at least the minimum once anything trades', () => {
    expect(commissionOn('0', schedule, 'USD').toFixed()).toBe('0');
    expect(commissionOn('-5', schedule, 'USD').toFixed()).toBe('0');
    expect(commissionOn('10', schedule, 'USD').toFixed()).toBe('1');
    expect(commissionOn('1000', schedule, 'USD').toFixed()).toBe('1');
    expect(commissionOn('2345.67', schedule, 'USD').toFixed()).toBe('2.35');
    expect(commissionOn('2344.99', schedule, 'USD').toFixed()).toBe('2.34');
    expect(commissionOn('150000', { rate: '0.001', minimum: '100' }, 'JPY').toFixed()).toBe('150');
  });

  it('charges each fill the difference, so a split order pays what a whole one pays', () => {
    const first = fillAmounts('0', '500.004', schedule, 'USD');
    const second = fillAmounts('500.004', '2345.67', schedule, 'USD');
    expect([first.gross.toFixed(), first.commission.toFixed()]).toEqual(['500', '1']);
    expect([second.gross.toFixed(), second.commission.toFixed()]).toEqual(['1845.67', '1.35']);
    expect(first.gross.plus(second.gross).toFixed()).toBe('2345.67');
    expect(first.commission.plus(second.commission).toFixed()).toBe(commissionOn('2345.67', schedule, 'USD').toFixed());
  });
});
