import { z } from '@trading/config';
import { DECIMAL_SYNTAX } from '@trading/money';

/**
 * The REST contract's building blocks, in zod: the facade validates requests with these
 * schemas, and the OpenAPI document (and the generated client) is made from them, so the two
 * cannot drift. Decimals are strings; times RFC 3339 UTC.
 */
export const contract = z.registry<{ id: string; description?: string }>();

/** Names a schema in the document (`#/components/schemas/<id>`). */
export const named = <S extends z.ZodType>(id: string, schema: S, description?: string): S => {
  contract.add(schema, { id, ...(description ? { description } : {}) });
  return schema;
};

export const decimal = z
  .string()
  .regex(DECIMAL_SYNTAX)
  .meta({ examples: ['1250.00'] });
export const money = decimal.meta({
  description: "An amount in the currency's minor units (2 decimals for USD, none for JPY)",
  examples: ['1250.00'],
});
export const price = decimal.meta({ description: "At least the instrument's tick precision, never rounded", examples: ['189.84'] });
export const quantity = decimal.meta({ description: 'A plain decimal', examples: ['10'] });
export const timestamp = z.iso.datetime().meta({ examples: ['2026-11-21T14:03:12.000Z'] });
export const currency = z
  .string()
  .regex(/^[A-Z]{3}$/)
  .meta({ description: 'ISO 4217', examples: ['USD'] });
export const id = z.guid();
export const cursor = z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page.' });
export const text = z.string();

export const ORDER_SIDES = ['BUY', 'SELL'] as const;
export const ORDER_TYPES = ['MARKET', 'LIMIT', 'STOP', 'STOP_LIMIT', 'TRAILING_STOP'] as const;
export const TIMES_IN_FORCE = ['DAY', 'GTC', 'IOC', 'FOK'] as const;
export const ORDER_CLASSES = ['SIMPLE', 'BRACKET', 'OCO', 'OTO'] as const;
export const ORDER_LEGS = ['TAKE_PROFIT', 'STOP_LOSS'] as const;
export const ORDER_STATUSES = ['ACCEPTED', 'PENDING', 'NEW', 'PARTIALLY_FILLED', 'FILLED', 'CANCELLED', 'REJECTED', 'EXPIRED'] as const;
export const CASH_ACTIVITY_TYPES = ['DEPOSIT', 'WITHDRAWAL', 'TRADE', 'FEE'] as const;
export const FUNDING_TYPES = ['DEPOSIT', 'WITHDRAWAL'] as const;
export const FUNDING_STATES = ['PENDING', 'COMPLETED', 'CANCELLED', 'REJECTED'] as const;
