import Decimal from 'decimal.js';
import type { EntityManager } from 'typeorm';
import type { CommissionSchedule } from './money';
import { cancelSiblings, reduceSiblings } from './oco-legs';
import { floorToLot } from './order-rules';
import {
  activateChildren,
  announceClose,
  closeOrder,
  orderClosed,
  orderUpdated,
  writeEvents,
  type OrderRow,
  type OutboxEvent,
} from './order-store';

/**
 * One order's fill, step by step, as the engine takes it: the pass's liquidity shared among
 * accounts, a stop triggered, how much fills at the quote (a limit only when marketable there,
 * FOK all or nothing), and what a trade sets off (the pair's other leg reduced or cancelled, a
 * group's children started, an IOC's remainder cancelled).
 */

/**
 * Shares `pool` among accounts wanting `demands` (in their order): equal shares in whole lots,
 * what an account does not need handed on to the others; when fewer lots are left than
 * accounts still wanting, one lot each in turn from `first`, so the leftovers go round from
 * pass to pass instead of always to the same accounts.
 */
export function shareLiquidity(pool: Decimal.Value, lot: string, demands: readonly Decimal[], first = 0): Decimal[] {
  const given = demands.map(() => new Decimal(0));
  const short = (i: number) => demands[i]!.minus(given[i]!);
  let left = new Decimal(pool);
  let wanting = demands.map((_, i) => i).filter((i) => short(i).gt(0));
  while (wanting.length > 0) {
    const share = floorToLot(left.div(wanting.length), lot);
    if (share.lte(0)) break;
    for (const i of wanting) {
      const take = Decimal.min(share, short(i));
      given[i] = given[i]!.plus(take);
      left = left.minus(take);
    }
    wanting = wanting.filter((i) => short(i).gt(0));
  }
  for (let k = 0; k < wanting.length; k++) {
    const i = wanting[(first + k) % wanting.length]!;
    const take = Decimal.min(lot, short(i));
    if (take.gt(left)) continue;
    given[i] = given[i]!.plus(take);
    left = left.minus(take);
  }
  return given;
}

/**
 * A stop not yet triggered is triggered (marked, in the fill's transaction) once the last price
 * reaches its stop: a buy's at or above, a sell's at or below. False while it waits; other
 * orders, and stops triggered before, go on at once.
 */
export async function triggerStop(tx: EntityManager, order: OrderRow, last: Decimal): Promise<boolean> {
  const stop = order.type === 'STOP' || order.type === 'STOP_LIMIT' || order.type === 'TRAILING_STOP';
  if (!stop || order.triggered_at) return true;
  const triggered = order.side === 'BUY' ? last.gte(order.stop_price!) : last.lte(order.stop_price!);
  if (!triggered) return false;
  await tx.query('UPDATE orders SET triggered_at = now(), updated_at = now() WHERE id = $1', [order.id]);
  return true;
}

/** Whether the order may trade at `price`: a buy's limit and collar reach it, a sell's limit does. */
export function marketableAt(order: OrderRow, price: Decimal): boolean {
  const limit = order.limit_price === null ? null : new Decimal(order.limit_price);
  if (order.side !== 'BUY') return !limit || price.gte(limit);
  const collar = order.collar_price === null ? null : new Decimal(order.collar_price);
  return (!limit || price.lte(limit)) && (!collar || price.lte(collar));
}

/**
 * What the order fills now at `price`: its remainder, at most the whole lots `available` to it.
 * Zero when it is not marketable or there is nothing for it; an IOC or FOK is then cancelled, as
 * is a FOK that cannot fill entirely.
 */
export async function fillableQuantity(
  tx: EntityManager,
  order: OrderRow,
  price: Decimal,
  available: Decimal,
  lot: string,
): Promise<Decimal> {
  const immediate = order.time_in_force === 'IOC' || order.time_in_force === 'FOK';
  if (!marketableAt(order, price)) {
    if (immediate)
      await closeOrder(
        tx,
        order,
        'CANCELLED',
        `${order.time_in_force}: not marketable at the ${order.side === 'BUY' ? 'ask' : 'bid'} ${price.toString()}`,
      );
    return new Decimal(0);
  }
  const remaining = new Decimal(order.quantity).minus(order.filled_quantity);
  const quantity = Decimal.min(remaining, floorToLot(Decimal.max(available, 0), lot));
  if (order.time_in_force === 'FOK' && quantity.lt(remaining)) {
    await closeOrder(tx, order, 'CANCELLED', `FOK: only ${quantity.toString()} available at ${price.toString()}`);
    return new Decimal(0);
  }
  if (quantity.isZero() && immediate) await closeOrder(tx, order, 'CANCELLED', `${order.time_in_force}: no liquidity`);
  return quantity;
}

/**
 * After a trade: its events (with those of the OCO legs it reduces to its remainder), then the
 * OCO legs it cancels, then (filled) a group's children started and its close announced, or an
 * IOC's unfilled remainder cancelled.
 */
export async function afterTrade(
  tx: EntityManager,
  order: OrderRow,
  updated: OrderRow,
  done: boolean,
  executed: OutboxEvent,
  siblings: readonly OrderRow[],
  schedule: CommissionSchedule,
): Promise<void> {
  // A simple order has no legs to cancel or children to start: its trade, its state and (filled)
  // its close go out in one statement, in the order the consumers expect them.
  const simple = !siblings.length && updated.order_class === 'SIMPLE';
  const closed = done && simple ? orderClosed(updated) : null;
  // A leg partly filled: the other legs go on for its remainder (a buy's hold with it), announced after its own state.
  const reduced = await reduceSiblings(tx, updated, done, siblings, schedule);
  await writeEvents(tx, [executed, orderUpdated(updated), ...(closed ? [closed] : []), ...reduced]);
  await cancelSiblings(tx, updated, done, siblings);
  if (done && !simple) {
    await activateChildren(tx, updated);
    await announceClose(tx, updated);
  } else if (!done && order.time_in_force === 'IOC') await closeOrder(tx, updated, 'CANCELLED', 'IOC: unfilled remainder cancelled');
}
