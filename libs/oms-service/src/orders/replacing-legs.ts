import Decimal from 'decimal.js';
import type { EntityManager } from 'typeorm';
import { AppError } from '@trading/errors';
import { checkReplacedLegPrices } from './classes/legs';
import type { OrderRequest } from './order-rules';
import type { OrderRow } from './order-store';

/**
 * Replacing a leg of a pair: an OCO's two legs, or a bracket's take-profit and stop-loss once its
 * entry has filled (which orders a replace may take: classes/). The replacement keeps its place
 * in the pair, so the pair still cancels (or reduces) each other. A sell pair still promises the
 * holding once; a buy leg's hold moves to its replacement as a buy's does (replacement.ts), so
 * each leg of a buy pair still holds its cash once, at what its remainder can cost at its new
 * price.
 */

/** Replaces of one pair's legs take turns (each checks its prices against the other leg as it is). */
export async function lockPair(tx: EntityManager, ocoGroupId: string | null): Promise<void> {
  if (ocoGroupId) await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`replace-pair:${ocoGroupId}`]);
}

/**
 * A leg whose replace has not finished: its replacement waits ACCEPTED for banking to move the
 * hold, the leg it replaces frozen (`replaced_by_order_id`) and still open. Only a buy leg's
 * replace is seen so (a sell leg's commits whole); until it finishes, the pair's other leg is
 * neither replaced (checkPairIdle) nor filled (lockSiblings).
 */
export const replaceUnderWay = (leg: OrderRow): boolean =>
  leg.status === 'ACCEPTED' || (leg.replaced_by_order_id !== null && (leg.status === 'NEW' || leg.status === 'PARTIALLY_FILLED'));

/** A leg is replaced only while no other leg of its pair is (its prices are checked against the other leg as it works). */
export async function checkPairIdle(tx: EntityManager, old: OrderRow): Promise<void> {
  if (!old.oco_group_id) return;
  const legs: OrderRow[] = await tx.query('SELECT * FROM orders WHERE oco_group_id = $1 AND id <> $2', [old.oco_group_id, old.id]);
  if (legs.some(replaceUnderWay))
    throw new AppError('CONFLICT', "The pair's other leg is being replaced; try again in a moment", { field: 'orderId' });
}

/**
 * A leg's new prices against the pair's other working leg, as placing checks a pair: a sell
 * pair's take-profit limit above its stop, a buy pair's below it. The stop leg is the STOP_LOSS
 * one; the other (a bracket's TAKE_PROFIT, an OCO's own order) is the take-profit limit.
 */
export async function checkPairPrices(tx: EntityManager, old: OrderRow, next: OrderRequest): Promise<void> {
  if (!old.oco_group_id) return;
  const [other]: OrderRow[] = await tx.query(
    `SELECT * FROM orders WHERE oco_group_id = $1 AND id <> $2 AND replaced_by_order_id IS NULL
        AND status IN ('PENDING', 'NEW', 'PARTIALLY_FILLED') ORDER BY seq DESC LIMIT 1`,
    [old.oco_group_id, old.id],
  );
  if (!other) return;
  const stopReplaced = old.leg === 'STOP_LOSS';
  const takeProfit = new Decimal(stopReplaced ? other.limit_price! : next.limitPrice!).toFixed();
  const stop = new Decimal(stopReplaced ? next.stopPrice! : other.stop_price!).toFixed();
  checkReplacedLegPrices(next.side, stopReplaced ? 'STOP_LOSS' : 'TAKE_PROFIT', takeProfit, stop);
}

/**
 * An OCO's own order is its limit leg and the other leg's parent: its replacement takes that
 * place for the legs still working, so the pair is shown under the order that works (the
 * replaced one keeps its history).
 */
export async function adoptLegs(tx: EntityManager, old: OrderRow, replacement: OrderRow): Promise<void> {
  if (old.oco_group_id)
    await tx.query(
      `UPDATE orders SET parent_order_id = $2
        WHERE parent_order_id = $1 AND oco_group_id = $3 AND replaced_by_order_id IS NULL
          AND status IN ('PENDING', 'ACCEPTED', 'NEW', 'PARTIALLY_FILLED')`,
      [old.id, replacement.id, old.oco_group_id],
    );
}
