import Decimal from 'decimal.js';
import type { DataSource } from 'typeorm';
import { AppError } from '@trading/errors';
import { formatMoney } from '@trading/money';
import type { BankingClient } from './clients';
import { announceOrder, closeOrder, type OrderRow } from './order-store';

/**
 * The second half of replacing a buy. The first half froze the old order (its
 * `replaced_by_order_id` names the replacement: the engine, expiry and cancels leave it alone, so
 * what its fills cost can no longer change) and recorded the replacement as ACCEPTED. Here
 * banking moves the hold in one step (the old keeps what its fills cost, the replacement holds
 * its own amount), then the old order is CANCELLED ("Replaced by order …") and the replacement
 * starts working; or, refused, the replacement is REJECTED and the old order works on.
 * Idempotent: the placing request runs it, and the engine's sweep runs it again for a request
 * that died half-way.
 */
export async function finishReplacement(dataSource: DataSource, banking: BankingClient, replacementId: string): Promise<OrderRow> {
  const [next]: OrderRow[] = await dataSource.query('SELECT * FROM orders WHERE id = $1', [replacementId]);
  if (!next?.replaces_order_id) throw new Error(`order ${replacementId} replaces nothing`);
  if (next.status !== 'ACCEPTED') return next; // finished already
  const [old]: OrderRow[] = await dataSource.query('SELECT * FROM orders WHERE id = $1', [next.replaces_order_id]);
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
    await abandonReplacement(dataSource, next.id, err.message);
    throw err;
  }
  return completeReplacement(dataSource, next.id);
}

/** The old order CANCELLED (replaced), the replacement working: one transaction, both rows locked (old first). */
async function completeReplacement(dataSource: DataSource, replacementId: string): Promise<OrderRow> {
  return dataSource.transaction(async (tx) => {
    const [{ replaces_order_id: oldId }] = await tx.query('SELECT replaces_order_id FROM orders WHERE id = $1', [replacementId]);
    const [old]: OrderRow[] = await tx.query('SELECT * FROM orders WHERE id = $1 FOR UPDATE', [oldId]);
    const [next]: OrderRow[] = await tx.query('SELECT * FROM orders WHERE id = $1 FOR UPDATE', [replacementId]);
    if (next!.status !== 'ACCEPTED') return next!;
    if (old!.status === 'NEW' || old!.status === 'PARTIALLY_FILLED')
      await closeOrder(tx, old!, 'CANCELLED', `Replaced by order ${next!.id}`);
    const [[row]]: [OrderRow[]] = await tx.query(
      "UPDATE orders SET status = 'NEW', submitted_at = now(), updated_at = now() WHERE id = $1 RETURNING *",
      [replacementId],
    );
    await announceOrder(tx, row!);
    return row!;
  });
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
