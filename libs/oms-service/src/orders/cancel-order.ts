import Decimal from 'decimal.js';
import type { EntityManager } from 'typeorm';
import type { Claims } from '@trading/auth';
import { AppError } from '@trading/errors';
import type { OrderDesk } from './order-desk';
import { orderByClientOrderId, parseClientOrderId } from './order-lookup';
import { parseUuid } from './order-rules';
import { closeOrder, orderById, presentOrder, type OrderRow, type OrderView } from './order-store';

/**
 * Cancels a working order. The order's row lock decides a race with the engine: a fill
 * committed first leaves less to cancel (or a FILLED order: 409); a cancel first leaves nothing
 * to fill. Cancelling again answers the cancelled order. Nothing filled: the whole hold is given
 * back now rather than when banking reads the event (both are idempotent; whichever comes second
 * finds the hold released).
 */
export async function cancelOrder(desk: OrderDesk, claims: Claims, orderIdInput: unknown, requestId?: string): Promise<OrderView> {
  const orderId = parseUuid(orderIdInput, 'orderId');
  const existing = await orderById(desk.dataSource, orderId);
  if (!existing || !(await desk.accounts.find(existing.account_id, claims, { requestId })))
    throw new AppError('NOT_FOUND', 'Order not found', { field: 'orderId' });
  const order = await desk.dataSource.transaction((tx) => cancelLocked(tx, orderId));
  if (
    order.side === 'BUY' &&
    new Decimal(order.filled_quantity).isZero() &&
    !(await desk.banking.releaseHold(order.id, { userId: claims.sub, accountId: order.account_id }))
  ) {
    desk.logger.warn({ orderId }, 'hold release after cancel failed; the order.closed event will release it');
  }
  return presentOrder(order);
}

/** The cancel itself, under the order's row lock: what its status allows. */
async function cancelLocked(tx: EntityManager, orderId: string): Promise<OrderRow> {
  const [locked]: OrderRow[] = await tx.query('SELECT * FROM orders WHERE id = $1 FOR UPDATE', [orderId]);
  switch (locked!.status) {
    case 'CANCELLED':
      return locked!;
    case 'FILLED':
      throw new AppError('CONFLICT', 'The order is already filled', { field: 'orderId' });
    case 'REJECTED':
    case 'EXPIRED':
      throw new AppError('CONFLICT', `The order is already closed (${locked!.status})`, { field: 'orderId' });
    case 'ACCEPTED':
      throw new AppError('CONFLICT', 'The order is still being accepted; try again in a moment', { field: 'orderId' });
    default:
      if (locked!.replaced_by_order_id)
        throw new AppError('CONFLICT', `The order is being replaced by ${locked!.replaced_by_order_id}; cancel that one`, {
          field: 'orderId',
        });
      // An OCO leg, or a bracket's exit, takes the legs it would have cancelled with it.
      if (locked!.oco_group_id) {
        const siblings: OrderRow[] = await tx.query(
          "SELECT * FROM orders WHERE oco_group_id = $1 AND id <> $2 AND status IN ('PENDING', 'NEW', 'PARTIALLY_FILLED') ORDER BY seq FOR UPDATE",
          [locked!.oco_group_id, locked!.id],
        );
        for (const sibling of siblings) await closeOrder(tx, sibling, 'CANCELLED', `OCO: order ${locked!.id} was cancelled`);
      }
      return closeOrder(tx, locked!, 'CANCELLED', 'Cancelled by the client');
  }
}

/** Cancels the order of one of the caller's accounts that has this clientOrderId, as `cancelOrder` does. */
export async function cancelByClientOrderId(
  desk: OrderDesk,
  claims: Claims,
  accountIdInput: unknown,
  clientOrderIdInput: unknown,
  requestId?: string,
): Promise<OrderView> {
  const accountId = parseUuid(accountIdInput, 'accountId');
  const clientOrderId = parseClientOrderId(clientOrderIdInput);
  // Unknown accounts and other users' accounts look the same.
  if (!(await desk.accounts.find(accountId, claims, { requestId })))
    throw new AppError('NOT_FOUND', 'Account not found', { field: 'accountId' });
  const row = await orderByClientOrderId(desk.dataSource, accountId, clientOrderId);
  if (!row) throw new AppError('NOT_FOUND', `No order of this account has clientOrderId ${clientOrderId}`, { field: 'clientOrderId' });
  return cancelOrder(desk, claims, row.id, requestId);
}
