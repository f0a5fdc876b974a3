import { currentTraceparent } from '@trading/tracing';
import { createHash, randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { queryPrepared, type PreparedStatement } from '@trading/db';
import { AppError, sqlstateOf } from '@trading/errors';
import type { Instrument } from '../instruments/entities/instrument.entity';
import { OPEN_ORDER_CAP_SQLSTATE } from '../migrations';
import { orderIdempotency } from './order-idempotency';
import type { OrderClass, OrderLeg, OrderRequest } from './order-rules';
import { ORDER_COLUMNS, type OrderRow, type OrderStatus } from './order-store';
import type { Reservation } from './reservation';

/** What a new order's row carries besides its request: its hold, first status, expiry and place in a group. */
export interface NewOrder {
  reservation: Reservation | null;
  status: OrderStatus;
  expiresAt: Date | null;
  orderClass: OrderClass;
  parentOrderId?: string;
  leg?: OrderLeg;
  ocoGroupId?: string | null;
}

/** The Idempotency-Key a placement is made under, with the hash of the request that made it. */
export interface KeyClaim {
  owner: string;
  key: string;
  hash: string;
}

/**
 * Writing a placed order's row: in the caller's transaction, or (a plain buy) as one statement
 * with its key's claim. The database refuses a row past the open-order cap; that refusal is named
 * for the caller here.
 */
export class OrderInserts {
  /** The placement insert's prepared statements by text (two: with and without a key's claim). */
  private readonly statements = new Map<string, PreparedStatement>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly options: { maxOpenOrdersPerAccount: number },
  ) {}

  /** The order's row, ON CONFLICT of its clientOrderId nothing (undefined). */
  async insert(
    tx: EntityManager,
    userId: string,
    clientOrderId: string,
    request: OrderRequest,
    instrument: Instrument,
    o: NewOrder,
    /** Only if its key is first (`claimed`, a CTE yielding a row then, its parameters from $24 on): the order as `id`. */
    claim?: { id: string; claimed: string; params: unknown[] },
  ): Promise<OrderRow | undefined> {
    const columns = `account_id, user_id, client_order_id, symbol, currency, side, type, time_in_force, quantity, limit_price, stop_price,
                     collar_price, hold_amount, status, submitted_at, expires_at, trace_context, trail_price, trail_percent, high_water_mark,
                     order_class, parent_order_id, leg, oco_group_id`;
    const values = `$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, CASE WHEN $14 = 'NEW' THEN now() END, $15, $16, $17, $18,
                    CASE WHEN $7 = 'TRAILING_STOP' THEN $19::numeric END, $20, $21, $22, $23`;
    const inserted: OrderRow[] = await this.query(
      tx,
      claim
        ? `WITH ${claim.claimed}
           INSERT INTO orders (id, ${columns}) SELECT $${24 + claim.params.length}::uuid, ${values} FROM claimed
           ON CONFLICT (account_id, client_order_id) DO NOTHING RETURNING ${ORDER_COLUMNS}`
        : `INSERT INTO orders (${columns}) VALUES (${values}) ON CONFLICT (account_id, client_order_id) DO NOTHING RETURNING ${ORDER_COLUMNS}`,
      [
        request.accountId,
        userId,
        clientOrderId,
        request.symbol,
        instrument.currency,
        request.side,
        request.type,
        request.timeInForce,
        request.quantity,
        request.limitPrice,
        request.stopPrice,
        o.reservation?.collarPrice?.toFixed() ?? null,
        o.reservation ? o.reservation.holdAmount.toFixed() : null,
        o.status,
        o.expiresAt,
        currentTraceparent() ?? null,
        request.trailPrice ?? null,
        request.trailPercent ?? null,
        instrument.lastPrice,
        o.orderClass,
        o.parentOrderId ?? null,
        o.leg ?? null,
        o.ocoGroupId ?? null,
        ...(claim ? [...claim.params, claim.id] : []),
      ],
    );
    return inserted[0];
  }

  /**
   * The one-statement placement: the order row with its key's claim, if it has a key. Undefined
   * when that is not the whole story (the key exists: a replay, a concurrent duplicate or an
   * expired key; the clientOrderId was used before), for the transaction to decide.
   */
  async first(
    userId: string,
    clientOrderId: string,
    request: OrderRequest,
    instrument: Instrument,
    o: NewOrder,
    claim: KeyClaim | null | undefined,
  ): Promise<OrderRow | undefined> {
    if (!claim) return this.insert(this.dataSource.manager, userId, clientOrderId, request, instrument, o);
    const id = randomUUID();
    try {
      return await this.insert(this.dataSource.manager, userId, clientOrderId, request, instrument, o, {
        id,
        claimed: orderIdempotency.claimedCte(24),
        params: [claim.owner, claim.key, claim.hash, id],
      });
    } catch (err) {
      // The key was claimed for an order the clientOrderId refused (the deferred key → order check at commit).
      if (sqlstateOf(err) === '23503') return undefined;
      throw err;
    }
  }

  /** An insert into orders, with the database's refusal at the open-order cap named for the caller. */
  private async query(tx: EntityManager, sql: string, params: unknown[]): Promise<OrderRow[]> {
    try {
      // Outside a transaction (the one-statement placement, every plain buy) the text is one of two,
      // prepared once per connection: PostgreSQL then neither parses nor plans it per order.
      if (!tx.queryRunner) return await queryPrepared<OrderRow>(this.dataSource, this.statement(sql), params);
      return await tx.query(sql, params);
    } catch (err) {
      throw this.openOrderCapError(err);
    }
  }

  /**
   * The insert's prepared statement (two texts: with and without a key's claim), named after a
   * hash of its text: pg skips the parse for a name a connection has seen, so one name must never
   * stand for two texts, whoever else prepares on the same pool.
   */
  private statement(text: string): PreparedStatement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = { name: `oms-place-order-${createHash('sha256').update(text).digest('hex').slice(0, 16)}`, text };
      this.statements.set(text, statement);
    }
    return statement;
  }

  /**
   * At most `maxOpenOrdersPerAccount` working orders per account: the database counts them and
   * refuses the insert that would pass the cap (migration 060); this names it for the caller.
   */
  private openOrderCapError(err: unknown): unknown {
    if (sqlstateOf(err) !== OPEN_ORDER_CAP_SQLSTATE) return err;
    return new AppError(
      'UNPROCESSABLE',
      `This account already has ${this.options.maxOpenOrdersPerAccount} working orders, the most allowed; cancel some first`,
      { field: 'accountId' },
    );
  }
}
