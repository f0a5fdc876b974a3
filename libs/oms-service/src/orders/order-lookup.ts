import type { DataSource } from 'typeorm';
import { AppError } from '@trading/errors';
import { queryPrepared, type PreparedStatement } from '@trading/db';
import { ORDER_COLUMNS, type OrderRow, type OrderStatus } from './order-store';

/**
 * Finding orders by what a client knows of them: the clientOrderId it placed with (after a
 * timeout it does not know the order's id, or whether the order exists), and the list's filters.
 */

/**
 * A clientOrderId as orders carry it: the client's own (1 to 64 characters) or a bracket's,
 * OTO's or OCO's leg, which adds `:tp` or `:sl` to it.
 */
const CLIENT_ORDER_ID = /^[A-Za-z0-9._:-]{1,67}$/;
const SYMBOL = /^[A-Z0-9.]{1,12}$/;
/** Symbols one list may filter on. */
const MAX_FILTER_SYMBOLS = 100;

/** Not final (ACCEPTED, PENDING, NEW, PARTIALLY_FILLED) or final; ALL: no filter. */
const STATUS_GROUPS: Readonly<Record<'OPEN' | 'CLOSED' | 'ALL', readonly OrderStatus[] | null>> = {
  OPEN: ['ACCEPTED', 'PENDING', 'NEW', 'PARTIALLY_FILLED'],
  CLOSED: ['FILLED', 'CANCELLED', 'REJECTED', 'EXPIRED'],
  ALL: null,
};

const bad = (field: string, message: string) => new AppError('BAD_USER_INPUT', message, { field });

export function parseClientOrderId(input: unknown): string {
  if (typeof input !== 'string' || !CLIENT_ORDER_ID.test(input))
    throw bad('clientOrderId', 'clientOrderId must be 1 to 64 characters of A-Z a-z 0-9 . _ : - (a leg adds :tp or :sl)');
  return input;
}

/** The statuses a list keeps (`statusGroup`), or null for every status; `status` itself the caller checks. */
export function statusesOf(statusGroup: unknown): readonly OrderStatus[] | null {
  if (statusGroup === undefined || statusGroup === null) return null;
  if (typeof statusGroup !== 'string' || !(statusGroup in STATUS_GROUPS))
    throw bad('statusGroup', `statusGroup must be one of ${Object.keys(STATUS_GROUPS).join(', ')}`);
  return STATUS_GROUPS[statusGroup as keyof typeof STATUS_GROUPS];
}

/** An optional one-symbol filter (order rules, trades): null when absent; 400 naming `symbol` when malformed. */
export function symbolFilter(symbol: unknown): string | null {
  if (symbol === undefined || symbol === null) return null;
  if (typeof symbol !== 'string' || !SYMBOL.test(symbol))
    throw bad('symbol', 'symbol must be an instrument symbol: 1 to 12 upper-case letters, digits or dots');
  return symbol;
}

/** The symbols a list keeps, or null for all of them. An unknown symbol matches no order; it is no error. */
export function symbolsOf(symbols: unknown): string[] | null {
  if (symbols === undefined || symbols === null) return null;
  if (!Array.isArray(symbols) || !symbols.length || symbols.length > MAX_FILTER_SYMBOLS)
    throw bad('symbols', `symbols must name 1 to ${MAX_FILTER_SYMBOLS} instruments`);
  const malformed = symbols.find((s) => typeof s !== 'string' || !SYMBOL.test(s));
  if (malformed !== undefined) throw bad('symbols', `${String(malformed).slice(0, 20)} is not an instrument symbol, e.g. AAPL`);
  return [...new Set(symbols as string[])];
}

/** One order of an account by its clientOrderId: unique per account, so an index lookup. */
const BY_CLIENT_ORDER_ID: PreparedStatement = {
  name: 'oms-order-by-client-order-id',
  text: `SELECT ${ORDER_COLUMNS} FROM orders WHERE account_id = $1 AND client_order_id = $2`,
};

export async function orderByClientOrderId(db: DataSource, accountId: string, clientOrderId: string): Promise<OrderRow | null> {
  const [row] = await queryPrepared<OrderRow>(db, BY_CLIENT_ORDER_ID, [accountId, clientOrderId]);
  return row ?? null;
}
