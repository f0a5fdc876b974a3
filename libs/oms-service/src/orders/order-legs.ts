import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { AppError } from '@trading/errors';
import { formatMoney } from '@trading/money';
import type { Instrument } from '../instruments/entities/instrument.entity';
import type { BankingClient } from './clients';
import type { NewOrder, OrderInserts } from './order-insert';
import type { LegRequest } from './classes/legs';
import { checkInstrumentRules, checkPriceBand, prefixed, type OrderClass } from './order-rules';
import { announceOrder, closeOrder, orderById, type OrderRow } from './order-store';
import { reserve, type Reservation, type ReservationTerms } from './reservation';

/**
 * The legs of BRACKET, OCO and OTO orders: each checked as an order of its own, recorded with
 * its parent, refused or started with it.
 */

/** A leg once checked: what it would hold (a buy holds it). */
export type CheckedLeg = LegRequest & { reservation: Reservation };

/** A leg's own rules (tick, lots, price band) and, for a buy, what it holds; errors name `takeProfit.…` / `stopLoss.…`. */
export function checkLeg(leg: LegRequest, instrument: Instrument, priceBand: string, terms: ReservationTerms): Reservation {
  const name = leg.leg === 'TAKE_PROFIT' ? 'takeProfit' : 'stopLoss';
  try {
    checkInstrumentRules(leg.request, instrument);
    checkPriceBand(leg.request, instrument, priceBand);
    return reserve(leg.request, instrument, terms);
  } catch (err) {
    throw prefixed(err, name);
  }
}

/** A parent's legs, oldest first. */
async function legRows(tx: EntityManager, parentId: string): Promise<OrderRow[]> {
  return tx.query('SELECT * FROM orders WHERE parent_order_id = $1 ORDER BY seq', [parentId]);
}

/**
 * The legs' rows, in the parent's transaction: an OCO's other leg in the parent's group (the
 * parent its first leg), a bracket's exits in a group of their own, an OTO's child in none.
 * Children wait (PENDING) for the parent to fill; a leg that buys waits (ACCEPTED) for its hold.
 */
export async function recordLegs(
  tx: EntityManager,
  inserts: OrderInserts,
  parent: OrderRow,
  placed: { userId: string; clientOrderId: string; instrument: Instrument; expiresAt: Date | null; orderClass: OrderClass },
  legs: readonly CheckedLeg[],
): Promise<void> {
  const { orderClass } = placed;
  if (orderClass === 'OCO') await tx.query('UPDATE orders SET oco_group_id = id WHERE id = $1', [parent.id]);
  const exitGroup = orderClass === 'BRACKET' ? randomUUID() : orderClass === 'OCO' ? parent.id : null;
  for (const leg of legs) {
    const legBuy = leg.request.side === 'BUY';
    const row: NewOrder = {
      reservation: legBuy ? leg.reservation : null,
      status: leg.pending ? 'PENDING' : legBuy ? 'ACCEPTED' : 'NEW',
      expiresAt: placed.expiresAt,
      orderClass,
      parentOrderId: parent.id,
      leg: leg.leg,
      ocoGroupId: exitGroup,
    };
    const clientOrderId = `${placed.clientOrderId}:${leg.leg === 'TAKE_PROFIT' ? 'tp' : 'sl'}`;
    await inserts.insert(tx, placed.userId, clientOrderId, leg.request, placed.instrument, row);
  }
}

/** The whole group refused: the legs first (an OCO's other leg or a bracket's children must not work on their own), then the order. */
export async function rejectWithLegs(tx: EntityManager, order: OrderRow, reason: string): Promise<OrderRow> {
  for (const leg of await legRows(tx, order.id)) await closeOrder(tx, leg, 'REJECTED', reason);
  return closeOrder(tx, order, 'REJECTED', reason);
}

/** A group with nothing to hold works at once: the order, and its legs that are NEW (an OCO's other leg), announced. */
export async function announceWithLegs(tx: EntityManager, order: OrderRow): Promise<void> {
  await announceOrder(tx, order);
  for (const leg of await legRows(tx, order.id)) if (leg.status === 'NEW') await announceOrder(tx, leg);
}

/**
 * A BRACKET, OCO or OTO order with buys in it: each buy's hold in banking, then the order (and
 * an OCO's other leg) NEW, the children still PENDING. Any refusal rejects the whole group (the
 * children are cancelled with it, and what banking did hold comes back with each order's close).
 */
export async function confirmGroup(dataSource: DataSource, banking: BankingClient, order: OrderRow, userId: string): Promise<OrderRow> {
  const group = [order, ...(await legRows(dataSource.manager, order.id))];
  try {
    for (const o of group)
      if (o.side === 'BUY' && o.hold_amount !== null)
        await banking.placeHold(
          { orderId: o.id, accountId: o.account_id, currency: o.currency, amount: formatMoney(o.hold_amount, o.currency) },
          userId,
        );
  } catch (err) {
    const refused = err instanceof AppError && err.code === 'UNPROCESSABLE';
    if (!refused) throw err; // 503: the engine's sweep rejects the group once it is stale, releasing what was held
    return rejectAcceptedGroup(dataSource, order.id, err.message);
  }
  return dataSource.transaction(async (tx) => {
    const [rows]: [OrderRow[]] = await tx.query(
      `UPDATE orders SET status = 'NEW', submitted_at = now(), updated_at = now()
        WHERE (id = $1 OR parent_order_id = $1) AND status = 'ACCEPTED' RETURNING *`,
      [order.id],
    );
    for (const row of rows) await announceOrder(tx, row);
    return (await tx.query('SELECT * FROM orders WHERE id = $1', [order.id]))[0] as OrderRow;
  });
}

/** Banking refused a hold of the group: the order and its legs still ACCEPTED are REJECTED (the order as it is, if no longer ACCEPTED). */
async function rejectAcceptedGroup(dataSource: DataSource, orderId: string, reason: string): Promise<OrderRow> {
  return dataSource.transaction(async (tx) => {
    const [locked]: OrderRow[] = await tx.query("SELECT * FROM orders WHERE id = $1 AND status = 'ACCEPTED' FOR UPDATE", [orderId]);
    if (!locked) return (await orderById(dataSource, orderId))!;
    const rejected = await closeOrder(tx, locked, 'REJECTED', reason);
    const legs: OrderRow[] = await tx.query("SELECT * FROM orders WHERE parent_order_id = $1 AND status = 'ACCEPTED' FOR UPDATE", [
      orderId,
    ]);
    for (const leg of legs) await closeOrder(tx, leg, 'REJECTED', reason);
    return rejected;
  });
}
