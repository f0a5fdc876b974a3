import { AppError } from '@trading/errors';
import { parseDateRange, parseLimit, type CursorCodec, type Page } from '@trading/pagination';
import type { DataSource } from 'typeorm';
import { orderByClientOrderId, parseClientOrderId, statusesOf, symbolFilter, symbolsOf } from './order-lookup';
import { parseUuid } from './order-rules';
import {
  orderById,
  presentOrder,
  presentTrade,
  type OrderRow,
  type OrderStatus,
  type OrderView,
  type TradeRow,
  type TradeView,
} from './order-store';

/**
 * Reading orders and trades: one order (by id or clientOrderId), an account's pages of orders and
 * executions, and the batches the GraphQL loaders ask for (fills and legs of many orders at once).
 * Nothing here writes; placing, replacing, closing and cancelling are OrdersService's.
 */

const ORDER_STATUSES: readonly OrderStatus[] = [
  'ACCEPTED',
  'PENDING',
  'NEW',
  'PARTIALLY_FILLED',
  'FILLED',
  'CANCELLED',
  'REJECTED',
  'EXPIRED',
];

export class OrderQueries {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
  ) {}

  /** The children of several orders (a DataLoader's batch), in the order of `orderIds`: a bracket's exits, an OTO's child, an OCO's other leg. */
  async legsOf(orderIds: readonly string[]): Promise<OrderView[][]> {
    const rows: OrderRow[] = await this.dataSource.query('SELECT * FROM orders WHERE parent_order_id = ANY($1::uuid[]) ORDER BY seq', [
      orderIds,
    ]);
    const byOrder = new Map<string, OrderView[]>(orderIds.map((id) => [id, []]));
    for (const row of rows) byOrder.get(row.parent_order_id!)?.push(presentOrder(row));
    return orderIds.map((id) => byOrder.get(id)!);
  }

  /** One order of this account (null for an unknown id or another account's order). */
  async get(accountId: string, orderIdInput: unknown): Promise<OrderView | null> {
    const orderId = parseUuid(orderIdInput, 'orderId');
    const row = await orderById(this.dataSource, orderId);
    return row && row.account_id === accountId ? presentOrder(row) : null;
  }

  /** One order of this account by the clientOrderId it was placed with (null when none has it). */
  async byClientOrderId(accountId: string, clientOrderIdInput: unknown): Promise<OrderView | null> {
    const row = await orderByClientOrderId(this.dataSource, accountId, parseClientOrderId(clientOrderIdInput));
    return row ? presentOrder(row) : null;
  }

  /** The fills of several orders in one query (a DataLoader's batch), in the order of `orderIds`. */
  async fillsOf(orderIds: readonly string[]): Promise<TradeView[][]> {
    const rows: TradeRow[] = await this.dataSource.query('SELECT * FROM trades WHERE order_id = ANY($1::uuid[]) ORDER BY seq', [orderIds]);
    const byOrder = new Map<string, TradeView[]>(orderIds.map((id) => [id, []]));
    for (const row of rows) byOrder.get(row.order_id)?.push(presentTrade(row));
    return orderIds.map((id) => byOrder.get(id)!);
  }

  /** The account's orders, newest first; filter by status (or open/closed), symbols and creation time. */
  async list(
    accountId: string,
    args: { limit?: unknown; cursor?: unknown; from?: unknown; to?: unknown; status?: unknown; statusGroup?: unknown; symbols?: unknown },
  ): Promise<Page<OrderView>> {
    const limit = parseLimit(args.limit);
    const range = parseDateRange(args.from, args.to);
    if (args.status !== undefined && args.status !== null && !ORDER_STATUSES.includes(args.status as OrderStatus)) {
      throw new AppError('BAD_USER_INPUT', `status must be one of ${ORDER_STATUSES.join(', ')}`, { field: 'status' });
    }
    const [statuses, symbols] = [statusesOf(args.statusGroup), symbolsOf(args.symbols)];
    const scope = `orders:${accountId}`;
    const after = this.cursors.decode<{ s: string }>(args.cursor, scope, ['s']);
    const rows: OrderRow[] = await this.dataSource.query(
      `SELECT * FROM orders WHERE account_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::timestamptz IS NULL OR created_at >= $3)
          AND ($4::timestamptz IS NULL OR created_at < $4) AND ($5::bigint IS NULL OR seq < $5)
          AND ($7::text[] IS NULL OR status = ANY($7)) AND ($8::text[] IS NULL OR symbol = ANY($8)) ORDER BY seq DESC LIMIT $6`,
      [accountId, args.status ?? null, range.from, range.to, after?.s ?? null, limit + 1, statuses, symbols],
    );
    return this.cursors.page(rows, limit, scope, (last) => ({ s: String(last.seq) }), presentOrder);
  }

  /** The account's executions, newest first; filter by execution time and symbol. */
  async trades(
    accountId: string,
    args: { limit?: unknown; cursor?: unknown; from?: unknown; to?: unknown; symbol?: unknown },
  ): Promise<Page<TradeView>> {
    const limit = parseLimit(args.limit);
    const range = parseDateRange(args.from, args.to);
    const symbol = symbolFilter(args.symbol);
    const scope = `trades:${accountId}`;
    const after = this.cursors.decode<{ s: string }>(args.cursor, scope, ['s']);
    const rows: TradeRow[] = await this.dataSource.query(
      `SELECT * FROM trades WHERE account_id = $1 AND ($2::text IS NULL OR symbol = $2) AND ($3::timestamptz IS NULL OR executed_at >= $3)
          AND ($4::timestamptz IS NULL OR executed_at < $4) AND ($5::bigint IS NULL OR seq < $5) ORDER BY seq DESC LIMIT $6`,
      [accountId, symbol, range.from, range.to, after?.s ?? null, limit + 1],
    );
    return this.cursors.page(rows, limit, scope, (last) => ({ s: String(last.seq) }), presentTrade);
  }
}
