import Decimal from 'decimal.js';
import type { DataSource } from 'typeorm';
import { AppError } from '@trading/errors';
import { formatMoney } from '@trading/money';
import type { BankingClient } from './clients';
import { announceOrder, closeOrder, type OrderRow } from './order-store';
import { adoptLegs } from './replacing-legs';

/**
 * The second half of replacing a buy. The first half froze the old order (its
 * `replaced_by_order_id` names the replacement: the engine, expiry and cancels leave it alone, so
 * what its fills cost can no longer change) and recorded the replacement as ACCEPTED. Here
 * banking moves the hold in one step (the old keeps what its fills cost, the replacement holds
 * its own amount), then the old order is CANCELLED ("Replaced by order …") and the replacement
 * starts working; or, refused, the replacement is REJECTED and the old order works on.
 * Idempotent: the placing request runs it, and the engine's sweep runs it again for a request
 * that died half-way.
 *
 * A buy pair's leg is replaced the same way. Until the replace finishes its pair's other leg
 * neither fills nor is replaced (lockSiblings, checkPairIdle), so its fills cannot change the
 * frozen leg; only cancelling the other leg can close it meanwhile (a cancel takes the pair).
 * Then the replacement never works: it is REJECTED, and its hold, if banking had moved it
 * already, comes back with its close.
 */
export async function finishReplacement(dataSource: DataSource, banking: BankingClient, replacementId: string): Promise<OrderRow> {
  const [next]: OrderRow[] = await dataSource.query('SELECT * FROM orders WHERE id = $1', [replacementId]);
  if (!next?.replaces_order_id) throw new Error(`order ${replacementId} replaces nothing`);
  if (next.status !== 'ACCEPTED') return next; // finished already
  const [old]: OrderRow[] = await dataSource.query('SELECT * FROM orders WHERE id = $1', [next.replaces_order_id]);
  if (!working(old!)) return closedFirst(dataSource, next.id, old!);
  const keep = new Decimal(old!.gross_amount).plus(old!.commission);
  try {
    await banking.replaceHold(
      {
        orderId: old!.id,
        replacementOrderId: next.id,
        accountId: next.account_id,
        keep: formatMoney(keep, next.currency),
        amount: formatMoney(next.hold_amount!, next.currency),
      },
      next.user_id ?? 'unknown',
    );
  } catch (err) {
    if (!(err instanceof AppError && err.code === 'UNPROCESSABLE')) throw err; // banking unreachable: the sweep asks again
    // Banking refuses a hold given back already: the old order was closed (its pair cancelled) meanwhile.
    const [now]: OrderRow[] = await dataSource.query('SELECT * FROM orders WHERE id = $1', [old!.id]);
    if (!working(now!)) return closedFirst(dataSource, next.id, now!);
    await abandonReplacement(dataSource, next.id, err.message);
    throw err;
  }
  return completeReplacement(dataSource, next.id);
}

/** Whether the replaced order is still open (frozen, it waits for its replace to finish). */
const working = (old: OrderRow) => old.status === 'NEW' || old.status === 'PARTIALLY_FILLED';

/** The old order closed before its replace finished (a pair's leg, cancelled with the pair): the replacement REJECTED, answered 409. */
async function closedFirst(dataSource: DataSource, replacementId: string, old: OrderRow): Promise<never> {
  await abandonReplacement(dataSource, replacementId, `The order ${old.id} it replaces was closed (${old.status}) first`);
  throw new AppError('CONFLICT', `The order is already closed (${old.status})`, { field: 'orderId' });
}

/**
 * The old order CANCELLED (replaced), the replacement working: one transaction, both rows locked
 * (old first); a leg's replacement takes the old leg's place over the pair's other leg. An old
 * order closed meanwhile (a pair's leg, cancelled with the pair while banking moved the hold):
 * the replacement is REJECTED instead, its close giving the hold just moved back, answered 409.
 */
async function completeReplacement(dataSource: DataSource, replacementId: string): Promise<OrderRow> {
  const closed = await dataSource.transaction(async (tx) => {
    const [{ replaces_order_id: oldId }] = await tx.query('SELECT replaces_order_id FROM orders WHERE id = $1', [replacementId]);
    const [old]: OrderRow[] = await tx.query('SELECT * FROM orders WHERE id = $1 FOR UPDATE', [oldId]);
    const [next]: OrderRow[] = await tx.query('SELECT * FROM orders WHERE id = $1 FOR UPDATE', [replacementId]);
    if (next!.status !== 'ACCEPTED') return { row: next! };
    if (!working(old!)) {
      await closeOrder(tx, next!, 'REJECTED', `The order ${old!.id} it replaces was closed (${old!.status}) first`);
      return { row: next!, closedFirst: old!.status };
    }
    await adoptLegs(tx, old!, next!);
    await closeOrder(tx, old!, 'CANCELLED', `Replaced by order ${next!.id}`);
    const [[row]]: [OrderRow[]] = await tx.query(
      "UPDATE orders SET status = 'NEW', submitted_at = now(), updated_at = now() WHERE id = $1 RETURNING *",
      [replacementId],
    );
    await announceOrder(tx, row!);
    return { row: row! };
  });
  if (closed.closedFirst) throw new AppError('CONFLICT', `The order is already closed (${closed.closedFirst})`, { field: 'orderId' });
  return closed.row;
}

/** A refused replace: the replacement REJECTED, the old order working again as it was. */
async function abandonReplacement(dataSource: DataSource, replacementId: string, reason: string): Promise<void> {
  await dataSource.transaction(async (tx) => {
    const [next]: OrderRow[] = await tx.query("SELECT * FROM orders WHERE id = $1 AND status = 'ACCEPTED' FOR UPDATE", [replacementId]);
    if (!next) return;
    await closeOrder(tx, next, 'REJECTED', reason);
    await tx.query('UPDATE orders SET replaced_by_order_id = NULL, updated_at = now() WHERE id = $1 AND replaced_by_order_id = $2', [
      next.replaces_order_id,
      replacementId,
    ]);
  });
}
