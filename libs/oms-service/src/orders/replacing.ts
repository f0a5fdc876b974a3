import { currentTraceparent } from '@trading/tracing';
import { randomUUID } from 'node:crypto';
import Decimal from 'decimal.js';
import type { EntityManager } from 'typeorm';
import type { OwnedAccount } from '@trading/accounts-directory';
import { AppError } from '@trading/errors';
import type { Instrument } from '../instruments/entities/instrument.entity';
import { trailOf } from './classes/trailing-stop';
import { orderIdempotency } from './order-idempotency';
import type { KeyClaim } from './order-insert';
import { parseOrderRequest, type OrderRequest, type ReplaceRequest } from './order-rules';
import { announceOrder, closeOrder, type OrderRow } from './order-store';
import { reserve, type ReservationTerms } from './reservation';
import { adoptLegs, checkPairIdle, checkPairPrices, lockPair } from './replacing-legs';
import { insufficientPosition, sellable } from './sellable';

/**
 * Replacing a working order, up to where a buy's hold moves (replacement.ts finishes that): the
 * new terms, and the transaction that freezes the old order under its row lock and records the
 * replacement. A sell's replacement is checked against the holding and starts working there.
 */

const decimalOf = (value: string | null) => (value === null ? undefined : new Decimal(value).toFixed());
const same = (a: string | null | undefined, b: string | null) =>
  a === null || a === undefined ? b === null : b !== null && new Decimal(a).eq(b);

/**
 * The replacement's terms: the old order's, with what the request changes (its clientOrderId
 * the request's, if it gives one); the same terms again are refused.
 */
export function replacementTerms(existing: OrderRow, request: ReplaceRequest): OrderRequest {
  const trailing = existing.type === 'TRAILING_STOP';
  const merged = parseOrderRequest({
    accountId: existing.account_id,
    symbol: existing.symbol,
    side: existing.side,
    type: existing.type,
    timeInForce: request.timeInForce ?? existing.time_in_force,
    quantity: request.quantity ?? new Decimal(existing.quantity).toFixed(),
    limitPrice: request.limitPrice ?? decimalOf(existing.limit_price),
    // A trailing stop's stop is worked out from its trail, not replaced.
    stopPrice: request.stopPrice ?? (trailing ? undefined : decimalOf(existing.stop_price)),
    clientOrderId: request.clientOrderId,
    // Only a trailing stop takes a trail: anything else given one is refused naming the field.
    ...(trailing ? trailOf(existing, request) : { trailPrice: request.trailPrice, trailPercent: request.trailPercent }),
  });
  const sameTrail = same(merged.trailPrice, existing.trail_price) && same(merged.trailPercent, existing.trail_percent);
  if (
    same(merged.quantity, existing.quantity) &&
    same(merged.limitPrice, existing.limit_price) &&
    (trailing ? sameTrail : same(merged.stopPrice, existing.stop_price)) &&
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
  /** Whether the request gives a quantity (else the locked row's stands). */
  quantityChanged: boolean;
  /** A leg's pair (an OCO's, a bracket's exits): replaces within it take turns. */
  ocoGroupId: string | null;
  /** When a DAY order expires: the end of the session. */
  sessionEnd: () => Date;
}

/**
 * The replace's transaction: the key's claim, the old order locked and checked, the replacement
 * (the remainder) recorded and the old order frozen. A buy's replacement (a buy pair's leg
 * included, its hold reckoned on the remainder at the new price) waits ACCEPTED for banking to
 * move the hold; a sell's is checked against the holding, then the old order is CANCELLED and
 * the replacement works.
 */
export async function recordReplacement(tx: EntityManager, r: Replacement): Promise<OrderRow | { replay: string }> {
  const { claim } = r;
  if (claim && !(await orderIdempotency.claim(tx, claim.owner, claim.key, claim.hash)).first) return { replay: claim.key };
  await lockPair(tx, r.ocoGroupId);
  const [old]: OrderRow[] = await tx.query('SELECT * FROM orders WHERE id = $1 FOR UPDATE', [r.oldId]);
  // A leg's quantity may have come down with its pair's fills since it was read: unchanged, it is the locked row's.
  const remainder = remainderToReplace(old!, r.quantityChanged ? r.merged.quantity : old!.quantity);
  await checkPairIdle(tx, old!);
  const next = { ...r.merged, quantity: remainder.toFixed() };
  await checkPairPrices(tx, old!, next);
  const order = await insertReplacement(tx, r, next, old!);
  // From here the engine, expiry and cancels leave the old order alone.
  await tx.query('UPDATE orders SET replaced_by_order_id = $2, updated_at = now() WHERE id = $1', [old!.id, order.id]);
  if (claim) await orderIdempotency.remember(tx, claim.owner, claim.key, order.id);
  // Banking moves the hold next; a buy leg's replacement takes its place over the other leg once it works (replacement.ts).
  if (next.side === 'BUY') return order;
  await adoptLegs(tx, old!, order);
  // A leg's pair promises the holding once: the check leaves out the whole pair, the replacement included.
  const available = await sellable(tx, r.account, next.symbol, order.oco_group_id ?? order.id);
  if (remainder.gt(available)) throw new AppError('UNPROCESSABLE', insufficientPosition(available, next.symbol), { field: 'quantity' });
  const [frozen]: OrderRow[] = await tx.query('SELECT * FROM orders WHERE id = $1', [old!.id]);
  await closeOrder(tx, frozen!, 'CANCELLED', `Replaced by order ${order.id}`);
  await announceOrder(tx, order);
  return order;
}

/** What the replacement carries (`quantity`, the new total, less what has filled), once the locked old order is found replaceable. */
function remainderToReplace(old: OrderRow, quantity: string): Decimal {
  if (old.status === 'FILLED') throw new AppError('CONFLICT', 'The order is already filled', { field: 'orderId' });
  if (old.status === 'PENDING')
    throw new AppError(
      'CONFLICT',
      'The leg waits for its entry to fill: it can be replaced once it works (or cancel the entry and place it again)',
      {
        field: 'orderId',
      },
    );
  if (old.status === 'ACCEPTED')
    throw new AppError('CONFLICT', 'The order is still being accepted; try again in a moment', { field: 'orderId' });
  if (old.status !== 'NEW' && old.status !== 'PARTIALLY_FILLED')
    throw new AppError('CONFLICT', `The order is already closed (${old.status})`, { field: 'orderId' });
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

/**
 * The replacement's row, linked to the old order: a buy ACCEPTED with its hold (banking moves it
 * next), a sell NEW. A leg's replacement keeps its place in the group (class, leg, parent, pair),
 * so the engine treats it as its pair's other leg. A clientOrderId the account has used already
 * is refused, as on placing.
 */
async function insertReplacement(tx: EntityManager, r: Replacement, next: OrderRequest, old: OrderRow): Promise<OrderRow> {
  const buy = next.side === 'BUY';
  const reservation = reserve(next, r.instrument, r.terms);
  const clientOrderId = next.clientOrderId ?? randomUUID();
  const [inserted]: OrderRow[] = await tx.query(
    `INSERT INTO orders (account_id, user_id, client_order_id, symbol, currency, side, type, time_in_force, quantity, limit_price, stop_price,
                         collar_price, hold_amount, status, submitted_at, expires_at, trace_context, replaces_order_id,
                         trail_price, trail_percent, high_water_mark, order_class, leg, parent_order_id, oco_group_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, CASE WHEN $14 = 'NEW' THEN now() END, $15, $16, $17, $18, $19,
             CASE WHEN $7 = 'TRAILING_STOP' THEN $20::numeric END, $21, $22, $23, $24)
     ON CONFLICT (account_id, client_order_id) DO NOTHING RETURNING *`,
    [
      next.accountId,
      r.userId,
      clientOrderId,
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
      old.id,
      next.trailPrice ?? null,
      next.trailPercent ?? null,
      r.instrument.lastPrice,
      old.order_class,
      old.leg,
      old.parent_order_id,
      old.oco_group_id,
    ],
  );
  if (!inserted)
    throw new AppError('CONFLICT', `clientOrderId ${clientOrderId} was already used for another order of this account`, {
      field: 'clientOrderId',
    });
  return inserted;
}
