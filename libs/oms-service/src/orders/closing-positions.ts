import Decimal from 'decimal.js';
import type { DataSource } from 'typeorm';
import type { Claims } from '@trading/auth';
import type { AccountsDirectory } from '@trading/accounts-directory';
import { AppError } from '@trading/errors';
import { floorToLot, type CloseRequest, type OrderRequest } from './order-rules';
import type { OrderRow } from './order-store';

/**
 * Closing positions: the MARKET DAY sell that closes (part of) a holding, and what closing every
 * position of an account reads and cancels first.
 */

/**
 * The sell that closes `request` of a holding of `held`, of which working sells already
 * `promised` some: the whole free part, a quantity, or a percentage of the holding floored to
 * the lot. Sells already working keep their part (nothing left: 409 naming the symbol).
 */
export function closingSell(request: CloseRequest, held: Decimal, promised: Decimal, lotSize: string): OrderRequest {
  const free = held.minus(promised);
  const quantity = closeQuantity(request, held, free, lotSize);
  if (free.lte(0))
    throw new AppError('CONFLICT', `Working sell orders already sell the whole ${request.symbol} position; cancel them first`, {
      field: 'symbol',
    });
  if (quantity.gt(free)) {
    throw new AppError(
      'UNPROCESSABLE',
      `Only ${free.toString()} ${request.symbol} is not already being sold by working orders (${promised.toString()} is)`,
      { field: request.quantity ? 'quantity' : 'percentage' },
    );
  }
  return {
    accountId: request.accountId,
    symbol: request.symbol,
    side: 'SELL',
    type: 'MARKET',
    timeInForce: 'DAY',
    quantity: quantity.toFixed(),
    limitPrice: null,
    stopPrice: null,
    clientOrderId: null,
  };
}

/** The quantity asked for: `quantity` (at most the holding), `percentage` of the holding (at least one lot), or all that is free. */
function closeQuantity(request: CloseRequest, held: Decimal, free: Decimal, lotSize: string): Decimal {
  if (request.quantity) {
    const quantity = new Decimal(request.quantity);
    if (quantity.gt(held))
      throw new AppError('UNPROCESSABLE', `quantity exceeds the position of ${held.toString()}`, { field: 'quantity' });
    return quantity;
  }
  if (request.percentage) {
    const quantity = floorToLot(held.times(request.percentage).div(100), lotSize);
    if (quantity.lte(0))
      throw new AppError('UNPROCESSABLE', `${request.percentage}% of ${held.toString()} is less than one lot`, { field: 'percentage' });
    return quantity;
  }
  return free;
}

/** The orders an earlier close-all under this key placed (`<key>:close:<symbol>`, within the day keys last), by symbol; null if none did. */
export async function earlierCloses(dataSource: DataSource, owner: string, key: string): Promise<OrderRow[] | null> {
  const earlier: Array<{ order_id: string }> = await dataSource.query(
    `SELECT order_id FROM order_idempotency_keys WHERE user_id = $1 AND starts_with(key, $2) AND created_at >= now() - interval '24 hours'`,
    [owner, `${key}:close:`],
  );
  if (!earlier.length) return null;
  return dataSource.query('SELECT * FROM orders WHERE id = ANY($1::uuid[]) ORDER BY symbol', [earlier.map((e) => e.order_id)]);
}

/** Cancels the account's working orders, oldest first, with `cancel`; one that filled or closed meanwhile is passed over. */
export async function cancelWorking(
  dataSource: DataSource,
  accountId: string,
  cancel: (orderId: string) => Promise<unknown>,
): Promise<void> {
  const working: Array<{ id: string }> = await dataSource.query(
    "SELECT id FROM orders WHERE account_id = $1 AND status IN ('NEW', 'PARTIALLY_FILLED') ORDER BY seq",
    [accountId],
  );
  for (const { id } of working) {
    try {
      await cancel(id);
    } catch (err) {
      // Filled or closed meanwhile: nothing left to cancel.
      if (!(err instanceof AppError && err.code === 'CONFLICT')) throw err;
    }
  }
}

/** Every symbol the account may hold, sorted: those accounts knows of and those the OMS has traded for it. */
export async function symbolsToClose(
  dataSource: DataSource,
  accounts: AccountsDirectory,
  accountId: string,
  claims: Claims,
  requestId: string | undefined,
): Promise<string[]> {
  const traded: Array<{ symbol: string }> = await dataSource.query('SELECT DISTINCT symbol FROM trades WHERE account_id = $1', [accountId]);
  return [...new Set([...((await accounts.heldSymbols?.(accountId, claims, requestId)) ?? []), ...traded.map((t) => t.symbol)])].sort();
}
