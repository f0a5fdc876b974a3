import { canonical, ceilMoney, formatMoney, formatPrice, minorUnits, parseAmount, parseCurrency, roundMoney } from './index';

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
    expect(() => parseAmount(100, 'USD')).toThrow(expect.objectContaining({ field: 'amount' }));
    expect(() => parseAmount('1234567890123', 'USD')).toThrow(/12 integer digits/);
  });

  it("knows every booked currency's minor units and refuses an unknown one", () => {
    expect([minorUnits('USD'), minorUnits('JPY'), minorUnits('KRW')]).toEqual([2, 0, 0]);
    expect(() => minorUnits('XXX')).toThrow('unknown currency XXX');
  });
});
