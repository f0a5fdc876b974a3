import {
  canonical,
  D,
  DECIMAL_SYNTAX,
  ceilMoney,
  formatMoney,
  formatPrice,
  minorUnits,
  parseAmount,
  parseCurrency,
  roundMoney,
} from './index';

describe('money', () => {
  it("formats amounts in the currency's minor units, half-up", () => {
    expect(formatMoney('10.5', 'USD')).toBe('10.50');
    expect(formatMoney('0.005', 'EUR')).toBe('0.01');
    expect(formatMoney('1049.5', 'JPY')).toBe('1050');
    expect(formatMoney('-2.345', 'GBP')).toBe('-2.35');
    expect(roundMoney('99.995', 'USD').toFixed()).toBe('100');
    expect(ceilMoney('10.001', 'USD').toFixed()).toBe('10.01');
    expect(ceilMoney('10.2', 'KRW').toFixed()).toBe('11');
  });

  it('formats prices at the tick precision without dropping digits', () => {
    expect(formatPrice('402.1', 'USD')).toBe('402.10');
    expect(formatPrice('172.35', 'USD', '0.01')).toBe('172.35');
    expect(formatPrice('402.10000000', 'USD', '0.01')).toBe('402.10');
    expect(formatPrice('1.5', 'USD', '0.005')).toBe('1.500');
    expect(formatPrice('402.1033', 'USD', '0.01')).toBe('402.1033');
    expect(formatPrice('3100', 'JPY')).toBe('3100');
    expect(canonical('10.00000000')).toBe('10');
    expect(canonical('0.00000001')).toBe('0.00000001');
  });

  it('parses currencies and amounts, naming the field', () => {
    expect(parseCurrency('usd')).toBe('USD');
    expect(() => parseCurrency('XYZ', 'body.currency')).toThrow(
      expect.objectContaining({ code: 'BAD_USER_INPUT', field: 'body.currency' }),
    );
    expect(parseAmount('100.50', 'USD')).toBe('100.5');
    expect(() => parseAmount('100.5', 'JPY')).toThrow(/at most 0 decimals in JPY/);
    expect(() => parseAmount('0', 'USD')).toThrow(/greater than zero/);
    expect(() => parseAmount('1e3', 'USD')).toThrow(/decimal string/);
    expect(() => parseAmount(100, 'USD')).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT', field: 'amount' }));
    expect(() => parseAmount('1234567890123', 'USD')).toThrow(/12 integer digits/);
    expect(parseAmount('123456789012.25', 'USD')).toBe('123456789012.25');
    expect(parseAmount('1050', 'JPY')).toBe('1050');
    expect(() => parseAmount('10.255', 'USD')).toThrow(expect.objectContaining({ message: 'amount may have at most 2 decimals in USD' }));
  });

  it('refuses a currency that is not a code string, naming the field', () => {
    for (const value of [5, null, undefined, { toString: () => 'USD' }, 'US', 'usdx', 'toString', 'constructor'])
      expect(() => parseCurrency(value)).toThrow(
        expect.objectContaining({
          code: 'BAD_USER_INPUT',
          field: 'currency',
          message: 'currency must be a supported ISO 4217 currency code',
        }),
      );
    expect(parseCurrency('jPy', 'body.currency')).toBe('JPY');
  });

  it('accepts decimals only in the plain form the API writes: optional minus, digits, optional fraction', () => {
    for (const ok of ['0', '7', '-7', '10.5', '-0.00000001', '123456789012.12345678']) expect(DECIMAL_SYNTAX.test(ok)).toBe(true);
    for (const bad of ['', '-', '+1', '1.', '.5', '1e3', 'x1', '1x', '1.x', '1.5.5', ' 1', '1 ', '--1', 'Infinity', 'NaN'])
      expect(DECIMAL_SYNTAX.test(bad)).toBe(false);
  });

  it('keeps 64 significant digits, so products of ledger amounts stay exact', () => {
    const product = new D('123456789012.12345678').times('987654321098.87654321');
    expect(product.toFixed()).toBe('121932631136816034007548.8245681622374638');
    expect(new D('1').div(3).toFixed().length).toBe(66);
  });

  it("knows every booked currency's minor units and refuses an unknown one", () => {
    expect([minorUnits('USD'), minorUnits('JPY'), minorUnits('KRW')]).toEqual([2, 0, 0]);
    expect(() => minorUnits('XXX')).toThrow('unknown currency XXX');
  });
});
