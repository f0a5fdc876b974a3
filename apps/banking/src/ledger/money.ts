import Decimal from 'decimal.js';
import { AppError } from '@trading/errors';

/** ISO 4217 codes this broker books, with their minor units (JPY has none). */
export const CURRENCY_MINOR_UNITS: Readonly<Record<string, number>> = {
  USD: 2, EUR: 2, GBP: 2, CHF: 2, JPY: 0, CAD: 2, AUD: 2, NZD: 2, HKD: 2, SGD: 2, SEK: 2, NOK: 2, DKK: 2,
  PLN: 2, CZK: 2, HUF: 2, CNY: 2, INR: 2, KRW: 0, MXN: 2, BRL: 2, ZAR: 2, ILS: 2, TRY: 2,
};

/** An ISO 4217 code from the list above (case-insensitive on input, upper-case out). */
export function parseCurrency(value: unknown, field = 'currency'): string {
  const code = typeof value === 'string' ? value.toUpperCase() : '';
  if (!(code in CURRENCY_MINOR_UNITS)) throw new AppError('BAD_USER_INPUT', `${field} must be a supported ISO 4217 currency code`, { field });
  return code;
}

/** What the ledger's numeric(20, 8) columns hold: at most 12 integer digits. */
const AMOUNT = /^\d{1,12}(\.\d+)?$/;

/**
 * A money amount as the API accepts it: a plain decimal string greater than zero, at most 12
 * integer digits (what is stored) and no more decimals than the currency has (2; JPY 0).
 * Returned canonical.
 */
export function parseAmount(value: unknown, currency: string, field = 'amount'): string {
  const bad = (why: string) => new AppError('BAD_USER_INPUT', `${field} ${why}`, { field });
  if (typeof value !== 'string' || !AMOUNT.test(value)) throw bad('must be a decimal string such as "100.00" (at most 12 integer digits)');
  const amount = new Decimal(value);
  if (amount.lte(0)) throw bad('must be greater than zero');
  const minor = CURRENCY_MINOR_UNITS[currency] ?? 2;
  if (amount.decimalPlaces() > minor) throw bad(`may have at most ${minor} decimals in ${currency}`);
  return amount.toFixed();
}

/** Money on the wire: two decimals. */
export function formatMoney(value: Decimal.Value): string {
  return new Decimal(value).toFixed(2);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

/** Ids are UUIDs; anything else is malformed input, named by its field. */
export function parseId(value: unknown, field: string): string {
  if (!isUuid(value)) throw new AppError('BAD_USER_INPUT', `${field} must be a UUID`, { field });
  return value.toLowerCase();
}
