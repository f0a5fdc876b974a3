import Decimal from 'decimal.js';
import type { DataSource } from 'typeorm';
import { idempotencyOwner, parseIdempotencyKey, type Claims } from '@trading/auth';
import type { AccountsDirectory } from '@trading/accounts-directory';
import { requestHash } from '@trading/db';
import { AppError } from '@trading/errors';
import { cancelOrder } from './cancel-order';
import { answerOrder, checkCanTrade, earlierOrder, ownedAccount, type OrderDesk } from './order-desk';
import { floorToLot, parseCloseRequest, parseUuid, type CloseRequest, type OrderRequest } from './order-rules';
import { presentOrder, type OrderRow, type OrderView } from './order-store';
import { submitOrder } from './place-order';
import { holding } from './sellable';

/**
 * Closing positions: one position (all of it, a quantity or a percentage), or every position of
 * an account. A close is a MARKET DAY sell placed as any order is; what closing every position
 * reads and cancels first is below.
 */

/**
 * Closes a long position (no shorts exist here) with a MARKET DAY sell: all of it, `quantity`,
 * or `percentage` of the holding (floored to the lot). Sells already working keep their part:
 * only the quantity they do not already sell is closed (nothing left: 409 naming the symbol).
 * No holding: 404 naming the symbol. `Idempotency-Key` answers the first close again.
 */
export async function closePosition(
  desk: OrderDesk,
  claims: Claims,
  input: Record<string, unknown>,
  idempotencyKey: unknown,
  requestId?: string,
): Promise<OrderView> {
  const request = parseCloseRequest(input);
  const key = parseIdempotencyKey(idempotencyKey);
  const hash = requestHash('closePosition', request);
  if (key) {
    const earlier = await earlierOrder(desk, idempotencyOwner(claims), key, hash);
    if (earlier) return answerOrder(earlier);
  }
  const order = await closingOrder(desk, claims, request, requestId);
  return answerOrder(await submitOrder(desk, claims, order, { key, hash }, requestId));
}

/**
 * Closes every position of the account: first cancels its working orders (their holds come
 * back, their sells stop promising the holding), then one MARKET DAY sell per holding. With an
 * `Idempotency-Key`, each close is remembered under `<key>:close:<symbol>`, and a retry answers
 * those orders again without cancelling or placing anything.
 */
export async function closeAllPositions(
  desk: OrderDesk,
  claims: Claims,
  accountIdInput: unknown,
  idempotencyKey: unknown,
  requestId?: string,
): Promise<OrderView[]> {
  const accountId = parseUuid(accountIdInput, 'accountId');
  const key = parseIdempotencyKey(idempotencyKey);
  const account = await ownedAccount(desk, accountId, claims, requestId);
  if (key) {
    const earlier = await earlierCloses(desk.dataSource, idempotencyOwner(claims), key);
    if (earlier) return earlier.map(presentOrder);
  }
  checkCanTrade(account);
  await cancelWorking(desk.dataSource, accountId, (id) => cancelOrder(desk, claims, id, requestId));
  const orders: OrderView[] = [];
  for (const symbol of await symbolsToClose(desk.dataSource, desk.accounts, accountId, claims, requestId)) {
    const row = await closeHolding(desk, claims, accountId, symbol, key, requestId);
    if (row) orders.push(presentOrder(row));
  }
  return orders;
}

/** One holding's close in a close-all, remembered under `<key>:close:<symbol>`; null when nothing is (left) to close. */
async function closeHolding(
  desk: OrderDesk,
  claims: Claims,
  accountId: string,
  symbol: string,
  key: string | null | undefined,
  requestId: string | undefined,
): Promise<OrderRow | null> {
  const request = { accountId, symbol, quantity: null, percentage: null };
  let order: OrderRequest;
  try {
    order = await closingOrder(desk, claims, request, requestId);
  } catch (err) {
    if (err instanceof AppError && (err.code === 'NOT_FOUND' || err.code === 'CONFLICT')) return null; // nothing (left) to close
    throw err;
  }
  const keyed = { key: key ? `${key}:close:${symbol}` : null, hash: requestHash('closeAllPositions', request) };
  return submitOrder(desk, claims, order, keyed, requestId);
}

/** The sell order that closes (part of) a position, from the holding now. */
async function closingOrder(desk: OrderDesk, claims: Claims, request: CloseRequest, requestId?: string): Promise<OrderRequest> {
  const account = await ownedAccount(desk, request.accountId, claims, requestId, request.symbol);
  const instrument = await desk.instruments.find(request.symbol);
  const { held, promised } = await desk.dataSource.transaction((tx) => holding(tx, account, request.symbol));
  if (!instrument || held.lte(0)) throw new AppError('NOT_FOUND', `No position in ${request.symbol}`, { field: 'symbol' });
  return closingSell(request, held, promised, instrument.lotSize);
}

/**
 * The sell that closes `request` of a holding of `held`, of which working sells already
 * `promised` some: the whole free part, a quantity, or a percentage of the holding floored to
 * the lot. Sells already working keep their part (nothing left: 409 naming the symbol).
 */
function closingSell(request: CloseRequest, held: Decimal, promised: Decimal, lotSize: string): OrderRequest {
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
async function earlierCloses(dataSource: DataSource, owner: string, key: string): Promise<OrderRow[] | null> {
  const earlier: Array<{ order_id: string }> = await dataSource.query(
    `SELECT order_id FROM order_idempotency_keys WHERE user_id = $1 AND starts_with(key, $2) AND created_at >= now() - interval '24 hours'`,
    [owner, `${key}:close:`],
  );
  if (!earlier.length) return null;
  return dataSource.query('SELECT * FROM orders WHERE id = ANY($1::uuid[]) ORDER BY symbol', [earlier.map((e) => e.order_id)]);
}

/** Cancels the account's working orders, oldest first, with `cancel`; one that filled or closed meanwhile is passed over. */
async function cancelWorking(dataSource: DataSource, accountId: string, cancel: (orderId: string) => Promise<unknown>): Promise<void> {
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
async function symbolsToClose(
  dataSource: DataSource,
  accounts: AccountsDirectory,
  accountId: string,
  claims: Claims,
  requestId: string | undefined,
): Promise<string[]> {
  const traded: Array<{ symbol: string }> = await dataSource.query('SELECT DISTINCT symbol FROM trades WHERE account_id = $1', [accountId]);
  return [...new Set([...((await accounts.heldSymbols?.(accountId, claims, requestId)) ?? []), ...traded.map((t) => t.symbol)])].sort();
}
