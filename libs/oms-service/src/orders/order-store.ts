import { currentTraceparent } from '@trading/tracing';
import Decimal from 'decimal.js';
import type { DataSource, EntityManager } from 'typeorm';
import { queryPrepared, type PreparedStatement } from '@trading/db';
import { canonical, formatMoney, formatPrice } from '@trading/money';
import type { OrderClass, OrderLeg, OrderSide, OrderType, TimeInForce } from './order-rules';

export type OrderStatus = 'ACCEPTED' | 'PENDING' | 'NEW' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELLED' | 'REJECTED' | 'EXPIRED';

/** An orders row as PostgreSQL returns it. */
export interface OrderRow {
  id: string;
  seq: string;
  account_id: string;
  user_id: string | null;
  client_order_id: string;
  /** The placing request's trace (`traceparent`), when tracing is on. */
  trace_context: string | null;
  symbol: string;
  currency: string;
  side: OrderSide;
  type: OrderType;
  time_in_force: TimeInForce;
  quantity: string;
  limit_price: string | null;
  stop_price: string | null;
  collar_price: string | null;
  hold_amount: string | null;
  filled_quantity: string;
  filled_value: string;
  gross_amount: string;
  commission: string;
  status: OrderStatus;
  status_reason: string | null;
  created_at: Date;
  updated_at: Date;
  submitted_at: Date | null;
  triggered_at: Date | null;
  filled_at: Date | null;
  cancelled_at: Date | null;
  expired_at: Date | null;
  rejected_at: Date | null;
  expires_at: Date | null;
  /** The order this one replaced. */
  replaces_order_id: string | null;
  /** TRAILING_STOP: the trail, as a distance or a percentage (one of them). */
  trail_price: string | null;
  trail_percent: string | null;
  /** TRAILING_STOP: the best price since it started working (highest for a sell, lowest for a buy); the stop trails it. */
  high_water_mark: string | null;
  /** SIMPLE, BRACKET, OCO or OTO. */
  order_class: OrderClass;
  /** A child's entry (BRACKET, OTO) or an OCO's first leg. */
  parent_order_id: string | null;
  /** Which exit a child is. */
  leg: OrderLeg | null;
  /** Orders that cancel each other (a bracket's exits, an OCO's legs): a partial fill of a leg reduces the others to its remainder, a complete one cancels them (oco-legs.ts). */
  oco_group_id: string | null;
  /** The order replacing this one: set when the replace begins (the engine leaves the order alone from then on). */
  replaced_by_order_id: string | null;
}

export interface TradeRow {
  id: string;
  seq: string;
  order_id: string;
  account_id: string;
  symbol: string;
  side: OrderSide;
  quantity: string;
  price: string;
  currency: string;
  gross_amount: string;
  commission: string;
  net_amount: string;
  executed_at: Date;
}

/**
 * Every column of an orders row (OrderRow), named: for statements PostgreSQL prepares once per
 * connection, where a `*` would fail ("cached plan must not change result type") once a
 * migration adds a column under running instances. A spec checks it against the table.
 */
export const ORDER_COLUMNS = `id, seq, account_id, user_id, client_order_id, trace_context, symbol, currency, side, type, time_in_force,
  quantity, limit_price, stop_price, collar_price, hold_amount, filled_quantity, filled_value, gross_amount, commission, status,
  status_reason, created_at, updated_at, submitted_at, triggered_at, filled_at, cancelled_at, expired_at, rejected_at, expires_at,
  replaces_order_id, trail_price, trail_percent, high_water_mark, order_class, parent_order_id, leg, oco_group_id, replaced_by_order_id`;

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/** An order on the wire (GraphQL and REST): decimals as strings, times RFC 3339 UTC. */
export function presentOrder(o: OrderRow) {
  const filled = new Decimal(o.filled_quantity);
  return {
    id: o.id,
    accountId: o.account_id,
    clientOrderId: o.client_order_id,
    symbol: o.symbol,
    currency: o.currency,
    side: o.side,
    type: o.type,
    timeInForce: o.time_in_force,
    quantity: canonical(o.quantity),
    filledQuantity: canonical(filled),
    remainingQuantity: canonical(new Decimal(o.quantity).minus(filled)),
    limitPrice: o.limit_price === null ? null : formatPrice(o.limit_price, o.currency),
    stopPrice: o.stop_price === null ? null : formatPrice(o.stop_price, o.currency),
    averageFillPrice: filled.isZero()
      ? null
      : formatPrice(new Decimal(o.filled_value).div(filled).toDecimalPlaces(8, Decimal.ROUND_HALF_UP), o.currency),
    grossAmount: formatMoney(o.gross_amount, o.currency),
    commission: formatMoney(o.commission, o.currency),
    reservedAmount: o.hold_amount === null ? null : formatMoney(o.hold_amount, o.currency),
    status: o.status,
    statusReason: o.status_reason,
    createdAt: iso(o.created_at)!,
    updatedAt: iso(o.updated_at)!,
    submittedAt: iso(o.submitted_at),
    triggeredAt: iso(o.triggered_at),
    filledAt: iso(o.filled_at),
    cancelledAt: iso(o.cancelled_at),
    expiredAt: iso(o.expired_at),
    rejectedAt: iso(o.rejected_at),
    expiresAt: iso(o.expires_at),
    ...presentTrail(o),
    orderClass: o.order_class ?? 'SIMPLE',
    parentOrderId: o.parent_order_id ?? null,
    leg: o.leg ?? null,
    replaces: o.replaces_order_id ?? null,
    replacedBy: o.replaced_by_order_id ?? null,
  };
}

/** A trailing stop's trail and water mark: null on every other order. */
function presentTrail(o: OrderRow) {
  return {
    trailPrice: o.trail_price === null || o.trail_price === undefined ? null : formatPrice(o.trail_price, o.currency),
    trailPercent: o.trail_percent === null || o.trail_percent === undefined ? null : canonical(o.trail_percent),
    highWaterMark: o.high_water_mark === null || o.high_water_mark === undefined ? null : formatPrice(o.high_water_mark, o.currency),
  };
}

export function presentTrade(t: TradeRow) {
  return {
    id: t.id,
    orderId: t.order_id,
    accountId: t.account_id,
    symbol: t.symbol,
    side: t.side,
    quantity: canonical(t.quantity),
    price: formatPrice(t.price, t.currency),
    currency: t.currency,
    grossAmount: formatMoney(t.gross_amount, t.currency),
    commission: formatMoney(t.commission, t.currency),
    netAmount: formatMoney(t.net_amount, t.currency),
    executedAt: iso(t.executed_at)!,
  };
}

/** One order's row as it is now (null for an unknown id). */
export async function orderById(db: DataSource | EntityManager, id: string): Promise<OrderRow | null> {
  const [row] = await db.query('SELECT * FROM orders WHERE id = $1', [id]);
  return (row as OrderRow | undefined) ?? null;
}

export type OrderView = ReturnType<typeof presentOrder>;
export type TradeView = ReturnType<typeof presentTrade>;

/** Event types on the settlement stream. */
export const TRADE_EXECUTED = 'trade.executed';
const ORDER_CLOSED = 'order.closed';
const ORDER_REDUCED = 'order.reduced';
/** Every state change a client can see (NEW, PARTIALLY_FILLED, and each final state): the live order events. */
const ORDER_UPDATED = 'order.updated';

/** Writes an event to the outbox inside the caller's transaction (the trade and its event commit together, or neither). */
async function writeEvent(tx: EntityManager, type: string, payload: Record<string, unknown>): Promise<void> {
  await tx.query('INSERT INTO outbox (type, payload, trace_context) VALUES ($1, $2, $3)', [
    type,
    JSON.stringify(payload),
    currentTraceparent() ?? null,
  ]);
}

export interface OutboxEvent {
  type: string;
  payload: Record<string, unknown>;
}

/**
 * Several events in one statement, kept in this order (a multi-row VALUES takes the outbox's
 * sequence row by row): a fill's trade, its order and its close, one round trip instead of three.
 */
export async function writeEvents(tx: EntityManager, events: readonly OutboxEvent[]): Promise<void> {
  if (events.length <= 1) {
    for (const e of events) await writeEvent(tx, e.type, e.payload);
    return;
  }
  const traceparent = currentTraceparent() ?? null;
  await tx.query(
    `INSERT INTO outbox (type, payload, trace_context) VALUES ${events.map((_, i) => `($${2 * i + 2}, $${2 * i + 3}, $1)`).join(', ')}`,
    [traceparent, ...events.flatMap((e) => [e.type, JSON.stringify(e.payload)])],
  );
}

/**
 * The order as its owner now sees it (order.updated), and who placed it beside it (null for an
 * order no user placed): for routing the change to that user's webhooks, never shown to clients.
 */
export function orderUpdated(row: OrderRow): OutboxEvent {
  return { type: ORDER_UPDATED, payload: { order: presentOrder(row), userId: row.user_id ?? null } };
}

/** The order as its owner now sees it, announced in the transaction that changed it. */
export async function announceOrder(tx: EntityManager, row: OrderRow): Promise<void> {
  const { type, payload } = orderUpdated(row);
  await writeEvent(tx, type, payload);
}

/** The start of a working order, with its event: prepared (parsed and planned once per connection). */
const START_WORKING: PreparedStatement = {
  name: 'oms-start-working',
  text: `WITH working AS (
           UPDATE orders SET status = 'NEW', submitted_at = $2, updated_at = $2 WHERE id = $1 AND status = 'ACCEPTED' RETURNING ${ORDER_COLUMNS}
         ), announced AS (
           INSERT INTO outbox (type, payload, trace_context) SELECT $3::text, $4::jsonb, $5::text FROM working
         )
         SELECT * FROM working`,
};

/**
 * An ACCEPTED order (its hold made) starts working, NEW, announced: one statement, so its own
 * transaction (no BEGIN and COMMIT round trips). The event is the row as the update leaves it,
 * built beforehand: only status and the two timestamps change, and only while it is still
 * ACCEPTED (nothing else changes an ACCEPTED order's row). The timestamp never precedes the row's
 * own. Undefined when the order is no longer ACCEPTED (the sweep rejected it meanwhile).
 */
export async function startWorking(db: DataSource, order: OrderRow): Promise<OrderRow | undefined> {
  const at = new Date(Math.max(Date.now(), new Date(order.updated_at).getTime()));
  const working: OrderRow = { ...order, status: 'NEW', submitted_at: at, updated_at: at };
  const rows = await queryPrepared<OrderRow>(db, START_WORKING, [
    order.id,
    at,
    ORDER_UPDATED,
    JSON.stringify(orderUpdated(working).payload),
    currentTraceparent() ?? null,
  ]);
  return rows[0];
}

const TIMESTAMP_OF: Partial<Record<OrderStatus, string>> = {
  FILLED: 'filled_at',
  CANCELLED: 'cancelled_at',
  EXPIRED: 'expired_at',
  REJECTED: 'rejected_at',
};

/**
 * Moves a locked order to a final state and, for a buy with a hold, announces the close so
 * banking gives back what the fills did not use (hold − gross − commission of every fill).
 */
export async function closeOrder(
  tx: EntityManager,
  order: OrderRow,
  status: 'FILLED' | 'CANCELLED' | 'EXPIRED' | 'REJECTED',
  reason: string | null,
): Promise<OrderRow> {
  const [[row]] = await tx.query(
    `UPDATE orders SET status = $2, ${TIMESTAMP_OF[status]} = now(), status_reason = $3, updated_at = now() WHERE id = $1 RETURNING *`,
    [order.id, status, reason],
  );
  await announceOrder(tx, row);
  await announceClose(tx, row);
  // An entry that ends without filling takes its waiting children with it (a filled one starts them).
  if (status !== 'FILLED') {
    const children: OrderRow[] = await tx.query(
      "SELECT * FROM orders WHERE parent_order_id = $1 AND status = 'PENDING' ORDER BY seq FOR UPDATE",
      [order.id],
    );
    for (const child of children) await closeOrder(tx, child, 'CANCELLED', `The parent order ${order.id} ended ${status} before it filled`);
  }
  return row as OrderRow;
}

/** A filled entry's children start working (PENDING → NEW), in the fill's transaction. */
export async function activateChildren(tx: EntityManager, parent: OrderRow): Promise<void> {
  const [rows]: [OrderRow[]] = await tx.query(
    "UPDATE orders SET status = 'NEW', submitted_at = now(), updated_at = now() WHERE parent_order_id = $1 AND status = 'PENDING' RETURNING *",
    [parent.id],
  );
  for (const row of rows) await announceOrder(tx, row);
}

/** The order.closed event of a closed buy with a hold (banking gives back what its fills did not use); none for others. */
export function orderClosed(row: OrderRow): OutboxEvent | null {
  if (row.side !== 'BUY' || row.hold_amount === null) return null;
  return {
    type: ORDER_CLOSED,
    payload: {
      order: {
        id: row.id,
        accountId: row.account_id,
        side: row.side,
        status: row.status,
        currency: row.currency,
        holdAmount: new Decimal(row.hold_amount).toFixed(),
        filledQuantity: new Decimal(row.filled_quantity).toFixed(),
        settledAmount: new Decimal(row.gross_amount).plus(row.commission).toFixed(),
      },
    },
  };
}

/**
 * The order.reduced event of a working buy brought down to a smaller quantity, its hold with it
 * (`hold_amount` already the new one): what its fills have cost and what its remainder can still
 * cost, so banking gives back the rest of the hold while the order works on.
 */
export function orderReduced(row: OrderRow): OutboxEvent {
  const settled = new Decimal(row.gross_amount).plus(row.commission);
  return {
    type: ORDER_REDUCED,
    payload: {
      order: {
        id: row.id,
        accountId: row.account_id,
        side: row.side,
        currency: row.currency,
        quantity: new Decimal(row.quantity).toFixed(),
        filledQuantity: new Decimal(row.filled_quantity).toFixed(),
        settledAmount: settled.toFixed(),
        holdAmount: new Decimal(row.hold_amount!).minus(settled).toFixed(),
      },
    },
  };
}

/** The order.closed event of a buy with a hold, written with the state change that closed it. */
export async function announceClose(tx: EntityManager, row: OrderRow): Promise<void> {
  const closed = orderClosed(row);
  if (closed) await writeEvent(tx, closed.type, closed.payload);
}
