import Decimal from 'decimal.js';
import type { EntityManager } from 'typeorm';
import { closeOrder, type OrderRow, type OrderStatus } from './order-store';

/**
 * The legs of an OCO group (an OCO's two legs, a bracket's take-profit and stop-loss) as the
 * engine fills them, inside the fill's transaction. Between them the legs never sell more than
 * the group's quantity: a partial fill of one leg brings every other working leg down to the
 * same remainder (its quantity becomes what it has filled plus that remainder), and once a leg
 * is filled the others are cancelled. Both legs then promise the same remainder, which the sell
 * checks count once per group (open-sells.ts).
 *
 * Pairs that buy keep the older rule, the first fill cancels the other leg: each buy leg holds
 * its own cash in banking, and banking can lower a working order's hold only by moving it to a
 * replacement order (a new order id, its hold moved by a call outside this transaction). There
 * is no way to shrink the hold of the same order, so a reduced buy leg would keep holding cash
 * for quantity it can no longer buy.
 */

/** A leg that still works (or is about to): a fill of its sibling reduces it. */
const WORKING: readonly OrderStatus[] = ['ACCEPTED', 'NEW', 'PARTIALLY_FILLED'];
/** A leg not yet closed: a filled sibling cancels it. */
const OPEN: readonly OrderStatus[] = ['PENDING', ...WORKING];

/** Whether a partial fill of this leg reduces its siblings (sell pairs) rather than cancelling them (buy pairs). */
const reducesSiblings = (leg: OrderRow) => leg.side === 'SELL';

/**
 * The other legs of the order's OCO group (none for an order outside one), every one locked.
 * Null when the order must not fill this pass: a leg is busy (a cancel, another instance: next
 * pass), or another leg has won the group (the order is cancelled here): a sell pair's leg once
 * it is filled, a buy pair's once it has any fill.
 */
export async function lockSiblings(tx: EntityManager, order: OrderRow): Promise<OrderRow[] | null> {
  if (!order.oco_group_id) return [];
  const [{ n }] = await tx.query('SELECT count(*)::int AS n FROM orders WHERE oco_group_id = $1 AND id <> $2', [
    order.oco_group_id,
    order.id,
  ]);
  const siblings: OrderRow[] = await tx.query('SELECT * FROM orders WHERE oco_group_id = $1 AND id <> $2 FOR UPDATE SKIP LOCKED', [
    order.oco_group_id,
    order.id,
  ]);
  if (siblings.length < n) return null;
  const first = siblings.find((s) => s.status === 'FILLED' || (!reducesSiblings(order) && new Decimal(s.filled_quantity).gt(0)));
  if (first) {
    await closeOrder(tx, order, 'CANCELLED', `OCO: order ${first.id} filled first`);
    return null;
  }
  return siblings;
}

/** Whether the sibling works on after the leg's trade (reduced to the leg's remainder) instead of being cancelled. */
const worksOn = (leg: OrderRow, done: boolean, sibling: OrderRow) => !done && reducesSiblings(leg) && WORKING.includes(sibling.status);

/**
 * After a trade on `leg` (`updated`, its row as the trade left it), the working siblings that
 * go on brought down to its remainder: each one's quantity becomes what it has filled plus
 * what the leg has left, its status unchanged. Returns the rows changed, for their events.
 */
export async function reduceSiblings(
  tx: EntityManager,
  updated: OrderRow,
  done: boolean,
  siblings: readonly OrderRow[],
): Promise<OrderRow[]> {
  const remaining = new Decimal(updated.quantity).minus(updated.filled_quantity);
  const reduced: OrderRow[] = [];
  for (const sibling of siblings) {
    if (!worksOn(updated, done, sibling)) continue;
    const quantity = new Decimal(sibling.filled_quantity).plus(remaining);
    if (quantity.gte(sibling.quantity)) continue; // no more than the leg's remainder already
    const [[row]]: [OrderRow[]] = await tx.query('UPDATE orders SET quantity = $2, updated_at = now() WHERE id = $1 RETURNING *', [
      sibling.id,
      quantity.toFixed(),
    ]);
    reduced.push(row!);
  }
  return reduced;
}

/** After a trade on `leg`: the open siblings that do not work on (all of them once it is filled) cancelled, each announced. */
export async function cancelSiblings(tx: EntityManager, leg: OrderRow, done: boolean, siblings: readonly OrderRow[]): Promise<void> {
  for (const sibling of siblings)
    if (OPEN.includes(sibling.status) && !worksOn(leg, done, sibling))
      await closeOrder(tx, sibling, 'CANCELLED', `OCO: order ${leg.id} filled`);
}
