import Decimal from 'decimal.js';
import { AppError } from '@trading/errors';

/**
 * The decimal arithmetic of every service: 64 significant digits, so products of two
 * numeric(20, 8) values and FX cross rates are exact, and half-up rounding only where a figure
 * is shown or booked. Never JavaScript numbers for money, prices or quantities.
 */
export const D = Decimal.clone({ precision: 64, rounding: Decimal.ROUND_HALF_UP });
export type Dec = InstanceType<typeof D>;
type Value = Decimal.Value;

/**
 * A decimal as the API writes and accepts it, in GraphQL (the `Decimal` scalar) and in REST:
 * optional minus, digits, optional fraction. No exponent, no plus, no JSON number.
 */
export const DECIMAL_SYNTAX = /^-?\d+(\.\d+)?$/;

/** ISO 4217 codes this broker books and trades in, with their minor units (JPY and KRW have none). */
const CURRENCY_MINOR_UNITS: Readonly<Record<string, number>> = {
  USD: 2,
  EUR: 2,
  GBP: 2,
  CHF: 2,
  JPY: 0,
  CAD: 2,
  AUD: 2,
  NZD: 2,
  HKD: 2,
  SGD: 2,
  SEK: 2,
  NOK: 2,
  DKK: 2,
  PLN: 2,
  CZK: 2,
  HUF: 2,
  CNY: 2,
  INR: 2,
  KRW: 0,
  MXN: 2,
  BRL: 2,
  ZAR: 2,
  ILS: 2,
  TRY: 2,
};

/** Decimals of the currency's minor unit (2 for USD, 0 for JPY). */
export function minorUnits(currency: string): number {
  const units = CURRENCY_MINOR_UNITS[currency];
  // A code outside the table is a bug upstream (every input is parsed with parseCurrency).
  if (units === undefined) throw new Error(`unknown currency ${currency}`);
  return units;
}

/** An ISO 4217 code from the table (case-insensitive on input, upper-case out). */
export function parseCurrency(value: unknown, field = 'currency'): string {
  if (typeof value !== 'string' || !Object.hasOwn(CURRENCY_MINOR_UNITS, value.toUpperCase()))
    throw new AppError('BAD_USER_INPUT', `${field} must be a supported ISO 4217 currency code`, { field });
  return value.toUpperCase();
}

/** What the ledgers' numeric(20, 8) columns hold: at most 12 integer digits. */
const AMOUNT = /^\d{1,12}(\.\d+)?$/;

/**
 * A money amount as the API accepts it: a plain decimal string greater than zero, at most 12
 * integer digits and no more decimals than the currency has. Returned canonical.
 */
export function parseAmount(value: unknown, currency: string, field = 'amount'): string {
  const bad = (why: string) => new AppError('BAD_USER_INPUT', `${field} ${why}`, { field });
  if (typeof value !== 'string' || !AMOUNT.test(value)) throw bad('must be a decimal string such as "100.00" (at most 12 integer digits)');
  const amount = new D(value);
  if (amount.lte(0)) throw bad('must be greater than zero');
  const minor = minorUnits(currency);
  if (amount.decimalPlaces() > minor) throw bad(`may have at most ${minor} decimals in ${currency}`);
  return amount.toFixed();
}

/** Money rounded half-up to the currency's minor unit: what is booked and shown. */
export const roundMoney = (value: Value, currency: string): Dec =>
  new D(value).toDecimalPlaces(minorUnits(currency), Decimal.ROUND_HALF_UP);

/** Money rounded up to the minor unit: what a hold reserves, so it always covers the charge. */
export const ceilMoney = (value: Value, currency: string): Dec => new D(value).toDecimalPlaces(minorUnits(currency), Decimal.ROUND_UP);

/** Money on the wire: exactly the currency's minor units, half-up ("10.50" USD, "1050" JPY). */
export const formatMoney = (value: Value, currency: string): string => new D(value).toFixed(minorUnits(currency), Decimal.ROUND_HALF_UP);

/** Decimals of a tick or lot size (0.01 → 2, 0.005 → 3, 1 → 0). */
export const decimalsOf = (step: Value): number => new D(step).decimalPlaces();

/**
 * A price on the wire: at least the instrument's tick precision (the currency's minor units when
 * the tick is not known) and never rounded, so "402.1" reads "402.10" beside "172.35", while an
 * average cost keeps every digit it has.
 */
export function formatPrice(value: Value, currency: string, tickSize?: Value): string {
  const price = new D(value);
  const floor = tickSize === undefined ? minorUnits(currency) : decimalsOf(tickSize);
  return price.toFixed(Math.max(floor, price.decimalPlaces()));
}

/** Quantities and rates on the wire: the canonical decimal (numeric comes back padded: 10.00000000 → 10). */
export const canonical = (value: Value): string => new D(value).toFixed();
