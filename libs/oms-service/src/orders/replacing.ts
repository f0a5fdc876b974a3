import { currentTraceparent } from '@trading/tracing';
import { randomUUID } from 'node:crypto';
import Decimal from 'decimal.js';
import type { EntityManager } from 'typeorm';
import type { OwnedAccount } from '@trading/accounts-directory';
import { AppError } from '@trading/errors';
import type { Instrument } from '../instruments/entities/instrument.entity';
import { orderIdempotency } from './order-idempotency';
import type { KeyClaim } from './order-insert';
import { parseOrderRequest, type OrderRequest, type ReplaceRequest } from './order-rules';
import { announceOrder, closeOrder, type OrderRow } from './order-store';
import { reserve, type ReservationTerms } from './reservation';
import { insufficientPosition, sellable } from './sellable';

/**
 * Replacing a working order, up to where a buy's hold moves (replacement.ts finishes that): the
 * new terms, and the transaction that freezes the old order under its row lock and records the
 * replacement. A sell's replacement is checked against the holding and starts working there.
 */

/** The replacement's terms: the old order's, with what the request changes; the same terms again are refused. */
export function replacementTerms(existing: OrderRow, request: ReplaceRequest): OrderRequest {
  const merged = parseOrderRequest({
    accountId: existing.account_id,
    symbol: existing.symbol,
    side: existing.side,
    type: existing.type,
    timeInForce: request.timeInForce ?? existing.time_in_force,
    quantity: request.quantity ?? new Decimal(existing.quantity).toFixed(),
    limitPrice: request.limitPrice ?? (existing.limit_price === null ? undefined : new Decimal(existing.limit_price).toFixed()),
    stopPrice:
      request.stopPrice ??
      (existing.stop_price === null || existing.type === 'TRAILING_STOP' ? undefined : new Decimal(existing.stop_price).toFixed()),
    trailPrice: existing.trail_price === null ? undefined : new Decimal(existing.trail_price).toFixed(),
    trailPercent: existing.trail_percent === null ? undefined : new Decimal(existing.trail_percent).toFixed(),
  });
  const same = (a: string | null, b: string | null) => (a === null ? b === null : b !== null && new Decimal(a).eq(b));
  if (
    same(merged.quantity, existing.quantity) &&
    same(merged.limitPrice, existing.limit_price) &&
    (existing.type === 'TRAILING_STOP' || same(merged.stopPrice, existing.stop_price)) &&
    merged.timeInForce === existing.time_in_force
  )
    throw new AppError('UNPROCESSABLE', 'Nothing to change: the order already has these terms', { field: 'body' });
  return merged;
}

/** A replace checked and about to be recorded. */
export interface Replacement {
  claim: KeyClaim | undefined;
  userId: string;
  account: OwnedAccount;
  oldId: string;
  /** The new terms, quantity the new total (fills included). */
  merged: OrderRequest;
  instrument: Instrument;
  terms: ReservationTerms;
  /** When a DAY order expires: the end of the session. */
  sessionEnd: () => Date;
}

/**
 * The replace's transaction: the key's claim, the old order locked and checked, the replacement
 * (the remainder) recorded and the old order frozen. A buy's replacement waits ACCEPTED for
 * banking to move the hold; a sell's is checked against the holding, then the old order is
 * CANCELLED and the replacement works.
 */
export async function recordReplacement(tx: EntityManager, r: Replacement): Promise<OrderRow | { replay: string }> {
  const { claim } = r;
  if (claim && !(await orderIdempotency.claim(tx, claim.owner, claim.key, claim.hash)).first) return { replay: claim.key };
  const [old]: OrderRow[] = await tx.query('SELECT * FROM orders WHERE id = $1 FOR UPDATE', [r.oldId]);
  const remainder = remainderToReplace(old!, r.merged.quantity);
  const next = { ...r.merged, quantity: remainder.toFixed() };
  const order = await insertReplacement(tx, r, next, old!.id);
  // From here the engine, expiry and cancels leave the old order alone.
  await tx.query('UPDATE orders SET replaced_by_order_id = $2, updated_at = now() WHERE id = $1', [old!.id, order.id]);
  if (claim) await orderIdempotency.remember(tx, claim.owner, claim.key, order.id);
  if (next.side === 'BUY') return order; // banking moves the hold next
  const available = await sellable(tx, r.account, next.symbol, order.id);
  if (remainder.gt(available)) throw new AppError('UNPROCESSABLE', insufficientPosition(available, next.symbol), { field: 'quantity' });
  const [frozen]: OrderRow[] = await tx.query('SELECT * FROM orders WHERE id = $1', [old!.id]);
  await closeOrder(tx, frozen!, 'CANCELLED', `Replaced by order ${order.id}`);
  await announceOrder(tx, order);
  return order;
}

/** What the replacement carries (`quantity`, the new total, less what has filled), once the locked old order is found replaceable. */
function remainderToReplace(old: OrderRow, quantity: string): Decimal {
  if (old.status === 'FILLED') throw new AppError('CONFLICT', 'The order is already filled', { field: 'orderId' });
  if (old.status === 'ACCEPTED')
    throw new AppError('CONFLICT', 'The order is still being accepted; try again in a moment', { field: 'orderId' });
  if (old.status !== 'NEW' && old.status !== 'PARTIALLY_FILLED')
    throw new AppError('CONFLICT', `The order is already closed (${old.status})`, { field: 'orderId' });
  if (old.order_class !== 'SIMPLE')
    throw new AppError('UNPROCESSABLE', `A ${old.order_class} order's legs cannot be replaced; cancel it and place a new one`, {
      field: 'orderId',
    });
  if (old.replaced_by_order_id)
    throw new AppError('CONFLICT', `The order is already being replaced by ${old.replaced_by_order_id}`, { field: 'orderId' });
  const filled = new Decimal(old.filled_quantity);
  const remainder = new Decimal(quantity).minus(filled);
  if (remainder.lte(0))
    throw new AppError('CONFLICT', `${filled.toString()} already filled: quantity (the new total) must exceed it`, {
      field: 'quantity',
    });
  return remainder;
}

/** The replacement's row, linked to the old order: a buy ACCEPTED with its hold (banking moves it next), a sell NEW. */
async function insertReplacement(tx: EntityManager, r: Replacement, next: OrderRequest, oldId: string): Promise<OrderRow> {
  const buy = next.side === 'BUY';
  const reservation = reserve(next, r.instrument, r.terms);
  const [inserted]: OrderRow[] = await tx.query(
    `INSERT INTO orders (account_id, user_id, client_order_id, symbol, currency, side, type, time_in_force, quantity, limit_price, stop_price,
                         collar_price, hold_amount, status, submitted_at, expires_at, trace_context, replaces_order_id,
                         trail_price, trail_percent, high_water_mark)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, CASE WHEN $14 = 'NEW' THEN now() END, $15, $16, $17, $18, $19,
             CASE WHEN $7 = 'TRAILING_STOP' THEN $20::numeric END) RETURNING *`,
    [
      next.accountId,
      r.userId,
      randomUUID(),
      next.symbol,
      r.instrument.currency,
      next.side,
      next.type,
      next.timeInForce,
      next.quantity,
      next.limitPrice,
      next.stopPrice,
      reservation.collarPrice?.toFixed() ?? null,
      buy ? reservation.holdAmount.toFixed() : null,
      buy ? 'ACCEPTED' : 'NEW',
      next.timeInForce === 'DAY' ? r.sessionEnd() : null,
      currentTraceparent() ?? null,
      oldId,
      next.trailPrice ?? null,
      next.trailPercent ?? null,
      r.instrument.lastPrice,
    ],
  );
  return inserted!;
}
