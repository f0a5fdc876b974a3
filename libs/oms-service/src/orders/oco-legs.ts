import Decimal from 'decimal.js';
import type { EntityManager } from 'typeorm';
import type { CommissionSchedule } from './money';
import { closeOrder, orderReduced, orderUpdated, type OrderRow, type OrderStatus, type OutboxEvent } from './order-store';
import { replaceUnderWay } from './replacing-legs';
import { holdOn } from './reservation';

/**
 * The legs of an OCO group (an OCO's two legs, a bracket's take-profit and stop-loss) as the
 * engine fills them, inside the fill's transaction. Between them the legs never trade more than
 * the group's quantity: a partial fill of one leg brings every other working leg down to the
 * same remainder (its quantity becomes what it has filled plus that remainder), and once a leg
 * is filled the others are cancelled. Both legs then promise the same remainder, which the sell
 * checks count once per group (open-sells.ts).
 *
 * A pair that buys follows the same rule, and each buy leg's hold shrinks with its quantity. The
 * leg's new hold is reckoned as a hold is when an order is placed (reservation.ts), on the most
 * it can now trade: what its fills have traded plus its remainder at its limit (or collar). The
 * row's `hold_amount` takes it, and in the same transaction the outbox gets an `order.reduced`
 * event naming what the fills have cost and what the remainder can still cost: banking brings
 * the hold down to their sum and gives the rest back to available cash, once, whenever the event
 * arrives (it names the hold's new amount, never raises it, and a closed order's hold is left
 * alone). A crash before the commit reduces nothing, after it the event is sent.
 */

/** A leg that still works (or is about to): a fill of its sibling reduces it. */
const WORKING: readonly OrderStatus[] = ['ACCEPTED', 'NEW', 'PARTIALLY_FILLED'];
/** A leg not yet closed: a filled sibling cancels it. */
const OPEN: readonly OrderStatus[] = ['PENDING', ...WORKING];

/**
 * The other legs of the order's OCO group (none for an order outside one), every one locked.
 * Null when the order must not fill this pass: a leg is busy (a cancel, another instance, or a
 * buy leg's replace waiting for banking to move its hold: next pass), or another leg is filled
 * (the order is cancelled here).
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
  const first = siblings.find((s) => s.status === 'FILLED');
  if (first) {
    await closeOrder(tx, order, 'CANCELLED', `OCO: order ${first.id} filled first`);
    return null;
  }
  // A fill now would reduce or cancel the frozen leg and its replacement before the hold has moved.
  if (siblings.some(replaceUnderWay)) return null;
  return siblings;
}

/** Whether the sibling works on after the leg's trade (reduced to the leg's remainder) instead of being cancelled. */
const worksOn = (done: boolean, sibling: OrderRow) => !done && WORKING.includes(sibling.status);

/**
 * The hold of a buy leg brought down to `quantity`: what its fills traded plus its remainder at
 * its limit (a stop without one: its collar), held as at placing. Null when it keeps its hold: a
 * sell (none), or a hold no larger than that already.
 */
function reducedHold(leg: OrderRow, quantity: Decimal, schedule: CommissionSchedule): Decimal | null {
  const price = leg.limit_price ?? leg.collar_price;
  if (leg.side !== 'BUY' || leg.hold_amount === null || price === null) return null;
  const most = new Decimal(leg.filled_value).plus(quantity.minus(leg.filled_quantity).times(price));
  const hold = holdOn(most, schedule, leg.currency);
  return hold.lt(leg.hold_amount) ? hold : null;
}

/**
 * After a trade on `leg` (`updated`, its row as the trade left it), the working siblings that
 * go on brought down to its remainder: each one's quantity becomes what it has filled plus
 * what the leg has left, its status unchanged, a buy's hold with it (`schedule`: the commission
 * its hold counts). Returns their events: each one's new state, and a buy's `order.reduced`.
 */
export async function reduceSiblings(
  tx: EntityManager,
  updated: OrderRow,
  done: boolean,
  siblings: readonly OrderRow[],
  schedule: CommissionSchedule,
): Promise<OutboxEvent[]> {
  const remaining = new Decimal(updated.quantity).minus(updated.filled_quantity);
  const events: OutboxEvent[] = [];
  for (const sibling of siblings) {
    if (!worksOn(done, sibling)) continue;
    const quantity = new Decimal(sibling.filled_quantity).plus(remaining);
    if (quantity.gte(sibling.quantity)) continue; // no more than the leg's remainder already
    const hold = reducedHold(sibling, quantity, schedule);
    const [[row]]: [OrderRow[]] = await tx.query(
      'UPDATE orders SET quantity = $2, hold_amount = coalesce($3, hold_amount), updated_at = now() WHERE id = $1 RETURNING *',
      [sibling.id, quantity.toFixed(), hold?.toFixed() ?? null],
    );
    events.push(orderUpdated(row!), ...(hold ? [orderReduced(row!)] : []));
  }
  return events;
}

/** After a trade on `leg`: the open siblings that do not work on (all of them once it is filled) cancelled, each announced. */
export async function cancelSiblings(tx: EntityManager, leg: OrderRow, done: boolean, siblings: readonly OrderRow[]): Promise<void> {
  for (const sibling of siblings)
    if (OPEN.includes(sibling.status) && !worksOn(done, sibling)) await closeOrder(tx, sibling, 'CANCELLED', `OCO: order ${leg.id} filled`);
}
