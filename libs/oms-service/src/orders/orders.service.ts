import { currentTraceparent } from '@trading/tracing';
import { createHash, randomUUID } from 'node:crypto';
import Decimal from 'decimal.js';
import type { DataSource, EntityManager } from 'typeorm';
import { idempotencyOwner, parseIdempotencyKey, type Claims } from '@trading/auth';
import { IdempotencyKeys, queryPrepared, requestHash, type PreparedStatement } from '@trading/db';
import { AppError, sqlstateOf } from '@trading/errors';
import type { Logger } from '@trading/logging';
import { parseDateRange, parseLimit, type CursorCodec, type Page } from '@trading/pagination';
import type { Instrument } from '../instruments/entities/instrument.entity';
import type { InstrumentsService } from '../instruments/instruments.service';
import type { TradingHours } from '../market/trading-hours';
import { bidAsk } from '../market-data/quote';
import type { AccountsDirectory, OwnedAccount } from '@trading/accounts-directory';
import type { BankingClient } from './clients';
import { finishReplacement } from './replacement';
import { promisedBySell } from './open-sells';
import { orderByClientOrderId, parseClientOrderId, statusesOf, symbolsOf } from './order-lookup';
import { OPEN_ORDER_CAP_SQLSTATE } from '../migrations';
import { ceilMoney, formatMoney, formatPrice } from '@trading/money';
import { commissionOn } from './money';
import {
  announceOrder,
  startWorking,
  closeOrder,
  ORDER_COLUMNS,
  presentOrder,
  presentTrade,
  type OrderRow,
  type OrderStatus,
  type OrderView,
  type TradeRow,
  type TradeView,
} from './order-store';
import {
  ceilToTick,
  checkInstrumentRules,
  checkPriceBand,
  ORDER_TYPES,
  parseOrderRequest,
  parseUuid,
  SHORT_SELLING_ALLOWED,
  TIME_IN_FORCE_BY_TYPE,
  TIMES_IN_FORCE,
  type OrderRequest,
  floorToLot,
  parseCloseRequest,
  parseLegs,
  ORDER_CLASSES,
  prefixed,
  type LegRequest,
  type OrderClass,
  type OrderLeg,
  parseReplaceRequest,
  trailingStop,
  type CloseRequest,
} from './order-rules';

export interface OrdersOptions {
  collar: string;
  /** The quoted bid-ask spread: market buys fill at the ask, so their hold is reckoned from it. */
  spread: string;
  commissionRate: string;
  /** Lowest commission of an order that trades, in the instrument's currency. */
  minimumCommission: string;
  /** Limit and stop prices within this fraction of the last price. */
  priceBand: string;
  /** Working orders one account may have at once. */
  maxOpenOrdersPerAccount: number;
  /** The most one order may be worth (quantity × limit, collar or last price), in the instrument's currency. */
  maxOrderValue: string;
  /** Told when an order that must act at once starts working (the engine's wake). */
  actNow?: () => void;
}

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
const SYMBOL = /^[A-Z0-9.]{1,12}$/;

/** What an order would reserve and cost, from the instrument's current price. */
interface Reservation {
  referencePrice: Decimal;
  /** Highest price a buy may pay (market and stop buys): the ask (at the stop, for stops) × (1 + collar). */
  collarPrice: Decimal | null;
  /** The value the hold covers: quantity × (limit | collar). */
  maxValue: Decimal;
  holdAmount: Decimal;
  estimatedPrice: Decimal;
}

export class OrdersService {
  /** The placement insert's prepared statements by text (two: with and without a key's claim). */
  private readonly insertStatements = new Map<string, PreparedStatement>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly instruments: InstrumentsService,
    private readonly accounts: AccountsDirectory,
    private readonly banking: BankingClient,
    private readonly hours: TradingHours,
    private readonly cursors: CursorCodec,
    private readonly options: OrdersOptions,
    private readonly logger: Logger,
  ) {}

  // ---- rules ------------------------------------------------------------------------------

  async rules(accountId: string, symbol: unknown) {
    if (symbol !== undefined && symbol !== null && (typeof symbol !== 'string' || !SYMBOL.test(symbol))) {
      throw new AppError('BAD_USER_INPUT', 'symbol must be an instrument symbol: 1 to 12 upper-case letters, digits or dots', {
        field: 'symbol',
      });
    }
    let instruments = await this.instruments.list();
    if (symbol) {
      instruments = instruments.filter((i) => i.symbol === symbol);
      if (!instruments.length) throw new AppError('NOT_FOUND', `Unknown symbol ${symbol as string}`, { field: 'symbol' });
    }
    return {
      accountId,
      orderTypes: [...ORDER_TYPES],
      orderClasses: [...ORDER_CLASSES],
      timesInForce: [...TIMES_IN_FORCE],
      timeInForceByType: ORDER_TYPES.map((type) => ({ type, timesInForce: [...TIME_IN_FORCE_BY_TYPE[type]] })),
      shortSellingAllowed: SHORT_SELLING_ALLOWED,
      marketOpen: this.hours.isOpen(),
      tradingHours: this.hours.spec === 'always' ? 'always open' : `${this.hours.spec} UTC`,
      commissionRate: this.options.commissionRate,
      minimumCommission: this.options.minimumCommission,
      priceBand: this.options.priceBand,
      maxOpenOrders: this.options.maxOpenOrdersPerAccount,
      marketOrderCollar: this.options.collar,
      instruments: instruments.map((i) => ({
        symbol: i.symbol,
        name: i.name,
        currency: i.currency,
        tickSize: i.tickSize,
        lotSize: i.lotSize,
        minQuantity: i.minQuantity!,
        maxQuantity: i.maxQuantity!,
        fractional: !new Decimal(i.lotSize).isInteger(),
        tradable: i.tradable,
        lastPrice: i.lastPrice,
      })),
    };
  }

  // ---- what-if ----------------------------------------------------------------------------

  /** What placing the order would do, changing nothing. Refusals come back as reasons, not errors. */
  async whatIf(claims: Claims, input: Record<string, unknown>, requestId?: string) {
    let request = parseOrderRequest(input);
    const group = parseLegs(input, request);
    const account = await this.ownedAccount(request.accountId, claims, requestId, request.side === 'SELL' ? request.symbol : undefined);
    const rejectReasons: Array<{ field: string; message: string }> = [];
    const warnings: string[] = [];
    const instrument = await this.instruments.find(request.symbol);
    if (!instrument) throw new AppError('UNPROCESSABLE', `Unknown symbol ${request.symbol}`, { field: 'symbol' });
    try {
      checkInstrumentRules(request, instrument);
      request = withTrailingStop(request, instrument);
      checkPriceBand(request, instrument, this.options.priceBand);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      rejectReasons.push({ field: err.field ?? 'body', message: err.message });
    }
    // Each leg on its own rules; the buys among them hold their cash too.
    const legs = group.legs.map((leg) => {
      let held = new Decimal(0);
      try {
        const lr = this.checkLeg(leg, instrument);
        if (leg.request.side === 'BUY') held = lr.holdAmount;
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        rejectReasons.push({ field: err.field ?? 'body', message: err.message });
      }
      return { leg, held };
    });
    if (account.status !== 'ACTIVE') rejectReasons.push({ field: 'accountId', message: `The account is ${account.status}` });
    const currency = instrument.currency;
    const r = this.reserve(request, instrument);
    const quantity = new Decimal(request.quantity);
    const value = quantity.times(r.estimatedPrice);
    const gross = new Decimal(formatMoney(value, currency));
    const commission = commissionOn(value, this.schedule, currency);
    const buy = request.side === 'BUY';
    const cashChange = buy ? gross.plus(commission).neg() : gross.minus(commission);
    const balance = await this.banking.balance(request.accountId, currency, claims);
    const available = new Decimal(balance.availableToTrade);
    const reserve = (buy ? r.holdAmount : new Decimal(0)).plus(legs.reduce((sum, l) => sum.plus(l.held), new Decimal(0)));
    if (reserve.gt(available)) {
      rejectReasons.push({
        field: 'quantity',
        message: `Insufficient buying power: the order reserves ${formatMoney(reserve, currency)} ${currency}, ${formatMoney(available, currency)} available to trade`,
      });
    }
    let position = null;
    if (!buy) {
      const held = await this.sellable(this.dataSource.manager, account, request.symbol);
      position = { before: held.toString(), change: quantity.neg().toString(), after: held.minus(quantity).toString() };
      if (quantity.gt(held))
        rejectReasons.push({
          field: 'quantity',
          message: `Insufficient position: ${held.toString()} ${request.symbol} available to sell (short selling is not allowed)`,
        });
    }
    if (!this.hours.isOpen()) warnings.push('The market is closed: the order would wait for the next session');
    if (request.type === 'MARKET' && buy)
      warnings.push(
        `A market buy fills at the ask; it reserves ${this.options.collar} above the ask and never pays more than ${r.collarPrice!.toString()}`,
      );
    if (request.limitPrice && new Decimal(request.limitPrice).minus(r.referencePrice).abs().gt(r.referencePrice.times('0.1')))
      warnings.push('The limit price is more than 10% away from the last price');
    const change = (before: Decimal, delta: Decimal) => ({
      before: formatMoney(before, currency),
      change: formatMoney(delta, currency),
      after: formatMoney(before.plus(delta), currency),
    });
    const initialRate = account.type === 'MARGIN' ? '0.5' : '1';
    const maintenanceRate = account.type === 'MARGIN' ? '0.25' : '1';
    const sign = buy ? 1 : -1;
    return {
      accountId: request.accountId,
      symbol: request.symbol,
      side: request.side,
      type: request.type,
      timeInForce: request.timeInForce,
      quantity: quantity.toString(),
      currency,
      lastPrice: formatPrice(r.referencePrice, currency, instrument.tickSize),
      estimatedPrice: formatPrice(r.estimatedPrice, currency, instrument.tickSize),
      estimatedGrossAmount: formatMoney(gross, currency),
      estimatedCommission: formatMoney(commission, currency),
      estimatedTotal: formatMoney(cashChange.abs(), currency),
      reservedAmount: formatMoney(reserve, currency),
      cash: change(new Decimal(balance.cash), cashChange),
      buyingPower: change(available, reserve.neg()),
      margin: {
        initialRequirementChange: formatMoney(gross.times(initialRate).times(sign), currency),
        maintenanceRequirementChange: formatMoney(gross.times(maintenanceRate).times(sign), currency),
      },
      position,
      orderClass: group.orderClass,
      legs: legs.map(({ leg, held }) => ({
        leg: leg.leg,
        side: leg.request.side,
        type: leg.request.type,
        limitPrice: leg.request.limitPrice === null ? null : formatPrice(leg.request.limitPrice, currency, instrument.tickSize),
        stopPrice: leg.request.stopPrice === null ? null : formatPrice(leg.request.stopPrice, currency, instrument.tickSize),
        quantity: leg.request.quantity,
        startsWhen: leg.pending ? 'the order fills' : 'at once',
        reservedAmount: formatMoney(held, currency),
      })),
      wouldBeRejected: rejectReasons.length > 0,
      rejectReasons,
      warnings,
    };
  }

  // ---- placing ----------------------------------------------------------------------------

  /**
   * Validates, records the order (ACCEPTED), reserves: a buy's hold in banking, a sell's
   * holding checked under a per-(account, symbol) lock against the position and every open
   * sell. Then NEW (working) or REJECTED with its reason (answered 422).
   */
  async place(claims: Claims, input: Record<string, unknown>, idempotencyKey: unknown, requestId?: string): Promise<OrderView> {
    const request = parseOrderRequest(input);
    const group = parseLegs(input, request);
    const key = parseIdempotencyKey(idempotencyKey);
    // A SIMPLE order hashes as it always has, so keys given before order classes still answer.
    const hash = requestHash('placeOrder', group.orderClass === 'SIMPLE' ? request : { ...request, ...group });
    return this.answer(await this.submit(claims, request, key, hash, requestId, group));
  }

  /**
   * Places a parsed order under an Idempotency-Key (`key`, with the hash of the request the
   * caller made, which for a close is not the order it derives): the order's row as it is now,
   * REJECTED included (callers answer it).
   */
  private async submit(
    claims: Claims,
    placed: OrderRequest,
    key: string | null | undefined,
    hash: string,
    requestId?: string,
    group: { orderClass: OrderClass; legs: LegRequest[] } = { orderClass: 'SIMPLE', legs: [] },
  ): Promise<OrderRow> {
    let request = placed;
    const keyOwner = idempotencyOwner(claims);
    const instrument = checkInstrumentRules(request, await this.instruments.find(request.symbol));
    request = withTrailingStop(request, instrument);
    checkPriceBand(request, instrument, this.options.priceBand);
    const legs = group.legs.map((leg) => ({ ...leg, reservation: this.checkLeg(leg, instrument) }));
    const account = await this.ownedAccount(request.accountId, claims, requestId, request.side === 'SELL' ? request.symbol : undefined);
    if (account.status !== 'ACTIVE')
      throw new AppError('UNPROCESSABLE', `The account is ${account.status}: it cannot trade`, { field: 'accountId' });
    const buy = request.side === 'BUY';
    // A plain buy writes one row (its hold comes next, in banking), with its key's claim: one
    // statement, its own transaction, without the round trips of BEGIN and COMMIT. Anything more
    // (a sell, legs, or a key that exists) is the transaction below.
    const oneRow = buy && !legs.length;
    if (key && !oneRow) {
      const earlier = await this.earlierRow(keyOwner, key, hash);
      if (earlier) return earlier;
    }
    const clientOrderId = request.clientOrderId ?? randomUUID();
    const r = this.reserve(request, instrument);
    const expiresAt = request.timeInForce === 'DAY' ? this.hours.sessionEnd() : null;

    const record = async (tx: EntityManager): Promise<OrderRow | { replay: string }> => {
      if (key) {
        // The key's row is written first: a concurrent duplicate waits on it, then replays.
        if (!(await orderIdempotency.claim(tx, keyOwner, key, hash)).first) return { replay: key };
      }
      // Every buy of the group (the order, an OCO's other leg, a child that buys) holds its cash before any of it works.
      const holds = buy || legs.some((l) => l.request.side === 'BUY');
      const order = await this.insertOrder(tx, claims.sub, clientOrderId, request, instrument, {
        reservation: buy ? r : null,
        status: holds ? 'ACCEPTED' : 'NEW',
        expiresAt,
        orderClass: group.orderClass,
      });
      if (!order)
        throw new AppError('CONFLICT', `clientOrderId ${clientOrderId} was already used for another order of this account`, {
          field: 'clientOrderId',
        });
      if (key) await orderIdempotency.remember(tx, keyOwner, key, order.id);
      if (group.orderClass === 'OCO') await tx.query('UPDATE orders SET oco_group_id = id WHERE id = $1', [order.id]);
      const exitGroup = group.orderClass === 'BRACKET' ? randomUUID() : group.orderClass === 'OCO' ? order.id : null;
      for (const leg of legs) {
        const legBuy = leg.request.side === 'BUY';
        await this.insertOrder(tx, claims.sub, `${clientOrderId}:${leg.leg === 'TAKE_PROFIT' ? 'tp' : 'sl'}`, leg.request, instrument, {
          reservation: legBuy ? leg.reservation : null,
          status: leg.pending ? 'PENDING' : legBuy ? 'ACCEPTED' : 'NEW',
          expiresAt,
          orderClass: group.orderClass,
          parentOrderId: order.id,
          leg: leg.leg,
          ocoGroupId: exitGroup,
        });
      }
      if (!buy) {
        // An OCO's legs sell the same shares once: its group is counted once (sellable()).
        const sellable = await this.sellable(tx, account, request.symbol, order.id);
        if (new Decimal(request.quantity).gt(sellable)) {
          const reason = `Insufficient position: ${sellable.toString()} ${request.symbol} available to sell (short selling is not allowed)`;
          // The whole group is refused: an OCO's other leg (NEW) or a bracket's children must not work on their own.
          for (const leg of await this.legRows(tx, order.id)) await closeOrder(tx, leg, 'REJECTED', reason);
          return closeOrder(tx, order, 'REJECTED', reason);
        }
        if (!holds) {
          await announceOrder(tx, order); // a sell is NEW at once; a buy once banking holds its cash
          for (const leg of await this.legRows(tx, order.id)) if (leg.status === 'NEW') await announceOrder(tx, leg);
        }
      }
      return order;
    };
    const row = { reservation: r, status: 'ACCEPTED' as const, expiresAt, orderClass: group.orderClass };
    const claim = key ? { owner: keyOwner, key, hash } : undefined;
    const recorded =
      (oneRow && (await this.insertFirst(claims.sub, clientOrderId, request, instrument, row, claim))) ||
      (await this.dataSource.transaction(record));
    if ('replay' in recorded) return (await this.earlierRow(keyOwner, key!, hash))!;
    let order = recorded;
    if (order.status !== 'ACCEPTED') return this.started(order);
    if (legs.length) return this.started(await this.confirmGroup(order, claims.sub));
    if (buy) order = await this.confirmHold(order, claims.sub);
    return this.started(order);
  }

  /** An order that must act at once (market, IOC, FOK) and now works: the engine is told to look now, not at its next pass. */
  private started(order: OrderRow): OrderRow {
    if (order.status === 'NEW' && (order.type === 'MARKET' || order.time_in_force === 'IOC' || order.time_in_force === 'FOK'))
      this.options.actNow?.();
    return order;
  }

  /** A leg's own rules (tick, lots, price band) and, for a buy, what it holds; errors name `takeProfit.…` / `stopLoss.…`. */
  private checkLeg(leg: LegRequest, instrument: Instrument): Reservation {
    const name = leg.leg === 'TAKE_PROFIT' ? 'takeProfit' : 'stopLoss';
    try {
      checkInstrumentRules(leg.request, instrument);
      checkPriceBand(leg.request, instrument, this.options.priceBand);
      return this.reserve(leg.request, instrument);
    } catch (err) {
      throw prefixed(err, name);
    }
  }

  private async insertOrder(
    tx: EntityManager,
    userId: string,
    clientOrderId: string,
    request: OrderRequest,
    instrument: Instrument,
    o: {
      reservation: Reservation | null;
      status: OrderStatus;
      expiresAt: Date | null;
      orderClass: OrderClass;
      parentOrderId?: string;
      leg?: OrderLeg;
      ocoGroupId?: string | null;
    },
    /** Only if its key is first (`claimed`, a CTE yielding a row then, its parameters from $24 on): the order as `id`. */
    claim?: { id: string; claimed: string; params: unknown[] },
  ): Promise<OrderRow | undefined> {
    const columns = `account_id, user_id, client_order_id, symbol, currency, side, type, time_in_force, quantity, limit_price, stop_price,
                     collar_price, hold_amount, status, submitted_at, expires_at, trace_context, trail_price, trail_percent, high_water_mark,
                     order_class, parent_order_id, leg, oco_group_id`;
    const values = `$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, CASE WHEN $14 = 'NEW' THEN now() END, $15, $16, $17, $18,
                    CASE WHEN $7 = 'TRAILING_STOP' THEN $19::numeric END, $20, $21, $22, $23`;
    const inserted: OrderRow[] = await this.insertQuery(
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
  private async insertFirst(
    userId: string,
    clientOrderId: string,
    request: OrderRequest,
    instrument: Instrument,
    o: Parameters<OrdersService['insertOrder']>[5],
    claim: { owner: string; key: string; hash: string } | null | undefined,
  ): Promise<OrderRow | undefined> {
    if (!claim) return this.insertOrder(this.dataSource.manager, userId, clientOrderId, request, instrument, o);
    const id = randomUUID();
    try {
      return await this.insertOrder(this.dataSource.manager, userId, clientOrderId, request, instrument, o, {
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
  private async insertQuery(tx: EntityManager, sql: string, params: unknown[]): Promise<OrderRow[]> {
    try {
      // Outside a transaction (the one-statement placement, every plain buy) the text is one of two,
      // prepared once per connection: PostgreSQL then neither parses nor plans it per order.
      if (!tx.queryRunner) return await queryPrepared<OrderRow>(this.dataSource, this.insertStatement(sql), params);
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
  private insertStatement(text: string): PreparedStatement {
    let statement = this.insertStatements.get(text);
    if (!statement) {
      statement = { name: `oms-place-order-${createHash('sha256').update(text).digest('hex').slice(0, 16)}`, text };
      this.insertStatements.set(text, statement);
    }
    return statement;
  }

  private async legRows(tx: EntityManager, parentId: string): Promise<OrderRow[]> {
    return tx.query('SELECT * FROM orders WHERE parent_order_id = $1 ORDER BY seq', [parentId]);
  }

  /**
   * A BRACKET, OCO or OTO order with buys in it: each buy's hold in banking, then the order (and
   * an OCO's other leg) NEW, the children still PENDING. Any refusal rejects the whole group (the
   * children are cancelled with it, and what banking did hold comes back with each order's close).
   */
  private async confirmGroup(order: OrderRow, userId: string): Promise<OrderRow> {
    const group = [order, ...(await this.legRows(this.dataSource.manager, order.id))];
    try {
      for (const o of group)
        if (o.side === 'BUY' && o.hold_amount !== null)
          await this.banking.placeHold(
            { orderId: o.id, accountId: o.account_id, currency: o.currency, amount: formatMoney(o.hold_amount, o.currency) },
            userId,
          );
    } catch (err) {
      const refused = err instanceof AppError && err.code === 'UNPROCESSABLE';
      if (!refused) throw err; // 503: the engine's sweep rejects the group once it is stale, releasing what was held
      return this.dataSource.transaction(async (tx) => {
        const [locked]: OrderRow[] = await tx.query("SELECT * FROM orders WHERE id = $1 AND status = 'ACCEPTED' FOR UPDATE", [order.id]);
        if (!locked) return (await this.row(order.id))!;
        const rejected = await closeOrder(tx, locked, 'REJECTED', err.message);
        const legs: OrderRow[] = await tx.query("SELECT * FROM orders WHERE parent_order_id = $1 AND status = 'ACCEPTED' FOR UPDATE", [
          order.id,
        ]);
        for (const leg of legs) await closeOrder(tx, leg, 'REJECTED', err.message);
        return rejected;
      });
    }
    return this.dataSource.transaction(async (tx) => {
      const [rows]: [OrderRow[]] = await tx.query(
        `UPDATE orders SET status = 'NEW', submitted_at = now(), updated_at = now()
          WHERE (id = $1 OR parent_order_id = $1) AND status = 'ACCEPTED' RETURNING *`,
        [order.id],
      );
      for (const row of rows) await announceOrder(tx, row);
      return (await tx.query('SELECT * FROM orders WHERE id = $1', [order.id]))[0] as OrderRow;
    });
  }

  /** A buy's hold in banking, then NEW; a refusal rejects the order. */
  private async confirmHold(order: OrderRow, userId: string): Promise<OrderRow> {
    try {
      await this.banking.placeHold(
        {
          orderId: order.id,
          accountId: order.account_id,
          currency: order.currency,
          amount: formatMoney(order.hold_amount!, order.currency),
        },
        userId,
      );
    } catch (err) {
      const refused = err instanceof AppError && err.code === 'UNPROCESSABLE';
      // Banking may or may not have made the hold before failing: give it back either way (idempotent).
      if (!refused && !(await this.banking.releaseHold(order.id, { userId, accountId: order.account_id }))) throw err; // the engine's sweep finishes it
      const rejected = await this.dataSource.transaction(async (tx) => {
        const [locked]: OrderRow[] = await tx.query("SELECT * FROM orders WHERE id = $1 AND status = 'ACCEPTED' FOR UPDATE", [order.id]);
        if (!locked) throw err;
        return closeOrder(tx, locked, 'REJECTED', refused ? (err as AppError).message : 'Banking could not reserve the cash');
      });
      if (!refused) throw err; // 503: the client may retry (a new clientOrderId or the same Idempotency-Key answers REJECTED)
      return rejected;
    }
    return (await startWorking(this.dataSource, order)) ?? (await this.row(order.id))!;
  }

  /** A rejected order is answered with a 422 naming the quantity; others as they are. */
  private answer(order: OrderRow): OrderView {
    if (order.status === 'REJECTED')
      throw new AppError('UNPROCESSABLE', `Order ${order.id} rejected: ${order.status_reason ?? 'refused'}`, { field: 'quantity' });
    return presentOrder(order);
  }

  private async earlierRow(userId: string, key: string, hash: string): Promise<OrderRow | null> {
    const orderId = await orderIdempotency.earlier(this.dataSource, userId, key, hash);
    if (!orderId) return null;
    return this.row(orderId);
  }

  private reserve(request: OrderRequest, instrument: Instrument): Reservation {
    const last = new Decimal(instrument.lastPrice);
    const quantity = new Decimal(request.quantity);
    const limit = request.limitPrice ? new Decimal(request.limitPrice) : null;
    const stop = request.stopPrice ? new Decimal(request.stopPrice) : null;
    const buy = request.side === 'BUY';
    // The quote the order meets: now, or (a stop) once the last price has come to its stop. Buys
    // fill at the ask, so a market or stop buy's collar, and with it its hold, covers a fill there.
    const quote = bidAsk(stop ?? last, instrument.tickSize, this.options.spread);
    const collarPrice = buy && !limit ? ceilToTick(quote.ask.times(new Decimal(1).plus(this.options.collar)), instrument.tickSize) : null;
    const maxValue = quantity.times(limit ?? collarPrice ?? last);
    // What is stored (numeric(20, 8)) and what one order may be worth: refused before anything is written.
    if (maxValue.gt(this.options.maxOrderValue)) {
      throw new AppError(
        'UNPROCESSABLE',
        `The order is worth up to ${maxValue.toDecimalPlaces(2).toString()} ${instrument.currency}; one order may be worth at most ${this.options.maxOrderValue}`,
        { field: 'quantity' },
      );
    }
    const holdAmount = ceilMoney(maxValue, instrument.currency).plus(commissionOn(maxValue, this.schedule, instrument.currency));
    // A market order fills at the quote (a buy at the ask, a sell at the bid), a marketable limit
    // too; a resting limit at its limit at worst; a stop at about the quote at its stop.
    const atQuote = buy ? quote.ask : quote.bid;
    const estimatedPrice = limit
      ? buy
        ? Decimal.min(limit, stop ? limit : atQuote)
        : Decimal.max(limit, stop ? limit : atQuote)
      : atQuote;
    return { referencePrice: last, collarPrice, maxValue, holdAmount, estimatedPrice };
  }

  /**
   * What the account may still sell: the holding accounts knows, plus the OMS's trades it has
   * not applied yet (the OMS's net traded quantity minus accounts' applied one), minus what
   * open sells already promise. Callers hold the per-(account, symbol) lock when they act on it.
   */
  private async sellable(tx: EntityManager, account: OwnedAccount, symbol: string, excludeOrder?: string): Promise<Decimal> {
    const { held, promised } = await this.holding(tx, account, symbol, excludeOrder);
    return held.minus(promised);
  }

  /**
   * The holding including trades accounts has not applied yet, and what open sells (but
   * `excludeOrder`) already promise of it. A bracket's (or OTO's) waiting exit promises what its
   * entry has bought so far: it starts selling the whole entry once that fills, so the shares a
   * partly filled entry bought are not free for another sell or a close (that was a short sale).
   */
  private async holding(
    tx: EntityManager,
    account: OwnedAccount,
    symbol: string,
    excludeOrder?: string,
  ): Promise<{ held: Decimal; promised: Decimal }> {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`sell:${account.id}:${symbol}`]);
    const [row] = await tx.query(
      `SELECT
         (SELECT coalesce(sum(CASE WHEN side = 'BUY' THEN quantity ELSE -quantity END), 0) FROM trades WHERE account_id = $1 AND symbol = $2)::text AS traded,
         (SELECT coalesce(sum(promised), 0) FROM (${promisedBySell(
           'AND o.symbol = $2 AND coalesce(o.oco_group_id, o.id) IS DISTINCT FROM $3::uuid',
         )}) g)::text AS promised`,
      [account.id, symbol, excludeOrder ?? null],
    );
    const settlement = account.positionSettlement ?? { quantity: '0', tradedQuantity: '0' };
    return {
      held: new Decimal(settlement.quantity).minus(settlement.tradedQuantity).plus(row.traded),
      promised: new Decimal(row.promised),
    };
  }

  private async ownedAccount(accountId: string, claims: Claims, requestId: string | undefined, symbol?: string): Promise<OwnedAccount> {
    const account = await this.accounts.find(accountId, claims, { symbol, requestId });
    if (!account) throw new AppError('NOT_FOUND', 'Account not found', { field: 'accountId' });
    return account;
  }

  // ---- replacing --------------------------------------------------------------------------

  /**
   * Replaces a working order: one new order, linked both ways (`replaces`,
   * `replacedBy`), carrying the remainder (the new `quantity` is the total, fills included, and
   * must exceed what has filled); the old order ends CANCELLED "Replaced by order …". The old
   * order's row lock (the one the engine fills under) decides a race with a fill: a fill
   * committed first leaves a smaller remainder (or a FILLED order: 409); the replace first
   * freezes the old order, so nothing more fills on it. A buy's hold moves in one banking step
   * (grows or shrinks by the difference); a refusal (buying power, position) leaves the old order
   * as it was and is a 422 naming the field.
   */
  async replace(claims: Claims, input: Record<string, unknown>, idempotencyKey: unknown, requestId?: string): Promise<OrderView> {
    const request = parseReplaceRequest(input);
    const key = parseIdempotencyKey(idempotencyKey);
    const keyOwner = idempotencyOwner(claims);
    const hash = requestHash('replaceOrder', request);
    const existing = await this.row(request.orderId);
    if (!existing || existing.account_id !== request.accountId) throw new AppError('NOT_FOUND', 'Order not found', { field: 'orderId' });
    const account = await this.ownedAccount(request.accountId, claims, requestId, existing.side === 'SELL' ? existing.symbol : undefined);
    if (key) {
      const earlier = await this.earlierRow(keyOwner, key, hash);
      if (earlier) return this.answer(earlier);
    }
    let merged = parseOrderRequest({
      accountId: existing.account_id,
      symbol: existing.symbol,
      side: existing.side,
      type: existing.type,
      timeInForce: request.timeInForce ?? existing.time_in_force,
      quantity: request.quantity ?? new Decimal(existing.quantity).toFixed(),
      limitPrice: request.limitPrice ?? (existing.limit_price === null ? undefined : new Decimal(existing.limit_price).toFixed()),
      stopPrice:
        request.stopPrice ??
        (existing.stop_price === null || existing.type === 'TRAILING_STOP' ? undefined : new Decimal(existing.stop_price).toFixed()),
      trailPrice: existing.trail_price === null ? undefined : new Decimal(existing.trail_price).toFixed(),
      trailPercent: existing.trail_percent === null ? undefined : new Decimal(existing.trail_percent).toFixed(),
    });
    const same = (a: string | null, b: string | null) => (a === null ? b === null : b !== null && new Decimal(a).eq(b));
    if (
      same(merged.quantity, existing.quantity) &&
      same(merged.limitPrice, existing.limit_price) &&
      (existing.type === 'TRAILING_STOP' || same(merged.stopPrice, existing.stop_price)) &&
      merged.timeInForce === existing.time_in_force
    )
      throw new AppError('UNPROCESSABLE', 'Nothing to change: the order already has these terms', { field: 'body' });
    const instrument = checkInstrumentRules(merged, await this.instruments.find(merged.symbol));
    merged = withTrailingStop(merged, instrument); // a trailing stop starts again from the current price
    checkPriceBand(merged, instrument, this.options.priceBand);
    if (account.status !== 'ACTIVE')
      throw new AppError('UNPROCESSABLE', `The account is ${account.status}: it cannot trade`, { field: 'accountId' });
    const buy = merged.side === 'BUY';

    const recorded = await this.dataSource.transaction(async (tx): Promise<OrderRow | { replay: string }> => {
      if (key && !(await orderIdempotency.claim(tx, keyOwner, key, hash)).first) return { replay: key };
      const [old]: OrderRow[] = await tx.query('SELECT * FROM orders WHERE id = $1 FOR UPDATE', [existing.id]);
      if (old!.status === 'FILLED') throw new AppError('CONFLICT', 'The order is already filled', { field: 'orderId' });
      if (old!.status === 'ACCEPTED')
        throw new AppError('CONFLICT', 'The order is still being accepted; try again in a moment', { field: 'orderId' });
      if (old!.status !== 'NEW' && old!.status !== 'PARTIALLY_FILLED')
        throw new AppError('CONFLICT', `The order is already closed (${old!.status})`, { field: 'orderId' });
      if (old!.order_class !== 'SIMPLE')
        throw new AppError('UNPROCESSABLE', `A ${old!.order_class} order's legs cannot be replaced; cancel it and place a new one`, {
          field: 'orderId',
        });
      if (old!.replaced_by_order_id)
        throw new AppError('CONFLICT', `The order is already being replaced by ${old!.replaced_by_order_id}`, { field: 'orderId' });
      const filled = new Decimal(old!.filled_quantity);
      const remainder = new Decimal(merged.quantity).minus(filled);
      if (remainder.lte(0))
        throw new AppError('CONFLICT', `${filled.toString()} already filled: quantity (the new total) must exceed it`, {
          field: 'quantity',
        });
      const next = { ...merged, quantity: remainder.toFixed() };
      const r = this.reserve(next, instrument);
      const [inserted]: OrderRow[] = await tx.query(
        `INSERT INTO orders (account_id, user_id, client_order_id, symbol, currency, side, type, time_in_force, quantity, limit_price, stop_price,
                             collar_price, hold_amount, status, submitted_at, expires_at, trace_context, replaces_order_id,
                             trail_price, trail_percent, high_water_mark)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, CASE WHEN $14 = 'NEW' THEN now() END, $15, $16, $17, $18, $19,
                 CASE WHEN $7 = 'TRAILING_STOP' THEN $20::numeric END) RETURNING *`,
        [
          next.accountId,
          claims.sub,
          randomUUID(),
          next.symbol,
          instrument.currency,
          next.side,
          next.type,
          next.timeInForce,
          next.quantity,
          next.limitPrice,
          next.stopPrice,
          r.collarPrice?.toFixed() ?? null,
          buy ? r.holdAmount.toFixed() : null,
          buy ? 'ACCEPTED' : 'NEW',
          next.timeInForce === 'DAY' ? this.hours.sessionEnd() : null,
          currentTraceparent() ?? null,
          old!.id,
          next.trailPrice ?? null,
          next.trailPercent ?? null,
          instrument.lastPrice,
        ],
      );
      const order = inserted!;
      // From here the engine, expiry and cancels leave the old order alone.
      await tx.query('UPDATE orders SET replaced_by_order_id = $2, updated_at = now() WHERE id = $1', [old!.id, order.id]);
      if (key) await orderIdempotency.remember(tx, keyOwner, key, order.id);
      if (buy) return order; // banking moves the hold next
      const sellable = await this.sellable(tx, account, next.symbol, order.id);
      if (remainder.gt(sellable))
        throw new AppError(
          'UNPROCESSABLE',
          `Insufficient position: ${sellable.toString()} ${next.symbol} available to sell (short selling is not allowed)`,
          { field: 'quantity' },
        );
      const [frozen]: OrderRow[] = await tx.query('SELECT * FROM orders WHERE id = $1', [old!.id]);
      await closeOrder(tx, frozen!, 'CANCELLED', `Replaced by order ${order.id}`);
      await announceOrder(tx, order);
      return order;
    });
    if ('replay' in recorded) return this.answer((await this.earlierRow(keyOwner, key!, hash))!);
    if (!buy) return presentOrder(recorded);
    return presentOrder(await finishReplacement(this.dataSource, this.banking, recorded.id));
  }

  // ---- closing positions ------------------------------------------------------------------

  /**
   * Closes a long position (no shorts exist here) with a MARKET DAY sell: all of it, `quantity`,
   * or `percentage` of the holding (floored to the lot). Sells already working keep their part:
   * only the quantity they do not already sell is closed (nothing left: 409 naming the symbol).
   * No holding: 404 naming the symbol. `Idempotency-Key` answers the first close again.
   */
  async closePosition(claims: Claims, input: Record<string, unknown>, idempotencyKey: unknown, requestId?: string): Promise<OrderView> {
    const request = parseCloseRequest(input);
    const key = parseIdempotencyKey(idempotencyKey);
    const hash = requestHash('closePosition', request);
    if (key) {
      const earlier = await this.earlierRow(idempotencyOwner(claims), key, hash);
      if (earlier) return this.answer(earlier);
    }
    const order = await this.closeOrderFor(claims, request, requestId);
    return this.answer(await this.submit(claims, order, key, hash, requestId));
  }

  /** The sell order that closes (part of) a position, from the holding now. */
  private async closeOrderFor(claims: Claims, request: CloseRequest, requestId?: string): Promise<OrderRequest> {
    const account = await this.ownedAccount(request.accountId, claims, requestId, request.symbol);
    const instrument = await this.instruments.find(request.symbol);
    const { held, promised } = await this.dataSource.transaction((tx) => this.holding(tx, account, request.symbol));
    if (!instrument || held.lte(0)) throw new AppError('NOT_FOUND', `No position in ${request.symbol}`, { field: 'symbol' });
    const free = held.minus(promised);
    let quantity: Decimal;
    if (request.quantity) {
      quantity = new Decimal(request.quantity);
      if (quantity.gt(held))
        throw new AppError('UNPROCESSABLE', `quantity exceeds the position of ${held.toString()}`, { field: 'quantity' });
    } else if (request.percentage) {
      quantity = floorToLot(held.times(request.percentage).div(100), instrument.lotSize);
      if (quantity.lte(0))
        throw new AppError('UNPROCESSABLE', `${request.percentage}% of ${held.toString()} is less than one lot`, { field: 'percentage' });
    } else {
      quantity = free;
    }
    if (free.lte(0))
      throw new AppError('CONFLICT', `Working sell orders already sell the whole ${request.symbol} position; cancel them first`, {
        field: 'symbol',
      });
    if (quantity.gt(free)) {
      throw new AppError(
        'UNPROCESSABLE',
        `Only ${free.toString()} ${request.symbol} is not already being sold by working orders (${promised.toString()} is)`,
        { field: request.quantity ? 'quantity' : 'percentage' },
      );
    }
    return {
      accountId: request.accountId,
      symbol: request.symbol,
      side: 'SELL',
      type: 'MARKET',
      timeInForce: 'DAY',
      quantity: quantity.toFixed(),
      limitPrice: null,
      stopPrice: null,
      clientOrderId: null,
    };
  }

  /**
   * Closes every position of the account: first cancels its working orders (their holds come
   * back, their sells stop promising the holding), then one MARKET DAY sell per holding. With an
   * `Idempotency-Key`, each close is remembered under `<key>:close:<symbol>`, and a retry answers
   * those orders again without cancelling or placing anything.
   */
  async closeAllPositions(claims: Claims, accountIdInput: unknown, idempotencyKey: unknown, requestId?: string): Promise<OrderView[]> {
    const accountId = parseUuid(accountIdInput, 'accountId');
    const key = parseIdempotencyKey(idempotencyKey);
    const owner = idempotencyOwner(claims);
    const account = await this.ownedAccount(accountId, claims, requestId);
    if (key) {
      const earlier: Array<{ order_id: string }> = await this.dataSource.query(
        `SELECT order_id FROM order_idempotency_keys WHERE user_id = $1 AND starts_with(key, $2) AND created_at >= now() - interval '24 hours'`,
        [owner, `${key}:close:`],
      );
      if (earlier.length) {
        const rows: OrderRow[] = await this.dataSource.query('SELECT * FROM orders WHERE id = ANY($1::uuid[]) ORDER BY symbol', [
          earlier.map((e) => e.order_id),
        ]);
        return rows.map(presentOrder);
      }
    }
    if (account.status !== 'ACTIVE')
      throw new AppError('UNPROCESSABLE', `The account is ${account.status}: it cannot trade`, { field: 'accountId' });
    const working: Array<{ id: string }> = await this.dataSource.query(
      "SELECT id FROM orders WHERE account_id = $1 AND status IN ('NEW', 'PARTIALLY_FILLED') ORDER BY seq",
      [accountId],
    );
    for (const { id } of working) {
      try {
        await this.cancel(claims, id, requestId);
      } catch (err) {
        // Filled or closed meanwhile: nothing left to cancel.
        if (!(err instanceof AppError && err.code === 'CONFLICT')) throw err;
      }
    }
    const traded: Array<{ symbol: string }> = await this.dataSource.query('SELECT DISTINCT symbol FROM trades WHERE account_id = $1', [
      accountId,
    ]);
    const symbols = [
      ...new Set([...((await this.accounts.heldSymbols?.(accountId, claims, requestId)) ?? []), ...traded.map((t) => t.symbol)]),
    ].sort();
    const orders: OrderView[] = [];
    for (const symbol of symbols) {
      const request = { accountId, symbol, quantity: null, percentage: null };
      let order: OrderRequest;
      try {
        order = await this.closeOrderFor(claims, request, requestId);
      } catch (err) {
        if (err instanceof AppError && (err.code === 'NOT_FOUND' || err.code === 'CONFLICT')) continue; // nothing (left) to close
        throw err;
      }
      const row = await this.submit(
        claims,
        order,
        key ? `${key}:close:${symbol}` : null,
        requestHash('closeAllPositions', request),
        requestId,
      );
      orders.push(presentOrder(row));
    }
    return orders;
  }

  // ---- cancelling -------------------------------------------------------------------------

  /**
   * Cancels a working order. The order's row lock decides a race with the engine: a fill
   * committed first leaves less to cancel (or a FILLED order: 409); a cancel first leaves
   * nothing to fill. Cancelling again answers the cancelled order.
   */
  async cancel(claims: Claims, orderIdInput: unknown, requestId?: string): Promise<OrderView> {
    const orderId = parseUuid(orderIdInput, 'orderId');
    const existing = await this.row(orderId);
    if (!existing || !(await this.accounts.find(existing.account_id, claims, { requestId })))
      throw new AppError('NOT_FOUND', 'Order not found', { field: 'orderId' });
    const order = await this.dataSource.transaction(async (tx) => {
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
    });
    // Nothing filled: give the whole hold back now rather than when banking reads the event
    // (both are idempotent; whichever comes second finds the hold released).
    if (
      order.side === 'BUY' &&
      new Decimal(order.filled_quantity).isZero() &&
      !(await this.banking.releaseHold(order.id, { userId: claims.sub, accountId: order.account_id }))
    ) {
      this.logger.warn({ orderId }, 'hold release after cancel failed; the order.closed event will release it');
    }
    return presentOrder(order);
  }

  // ---- reads ------------------------------------------------------------------------------

  private async row(id: string): Promise<OrderRow | null> {
    const [row] = await this.dataSource.query('SELECT * FROM orders WHERE id = $1', [id]);
    return (row as OrderRow | undefined) ?? null;
  }

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
    const row = await this.row(orderId);
    return row && row.account_id === accountId ? presentOrder(row) : null;
  }

  /** One order of this account by the clientOrderId it was placed with (null when none has it). */
  async byClientOrderId(accountId: string, clientOrderIdInput: unknown): Promise<OrderView | null> {
    const row = await orderByClientOrderId(this.dataSource, accountId, parseClientOrderId(clientOrderIdInput));
    return row ? presentOrder(row) : null;
  }

  /** Cancels the order of one of the caller's accounts that has this clientOrderId, as `cancel` does. */
  async cancelByClientOrderId(
    claims: Claims,
    accountIdInput: unknown,
    clientOrderIdInput: unknown,
    requestId?: string,
  ): Promise<OrderView> {
    const accountId = parseUuid(accountIdInput, 'accountId');
    const clientOrderId = parseClientOrderId(clientOrderIdInput);
    // Unknown accounts and other users' accounts look the same.
    if (!(await this.accounts.find(accountId, claims, { requestId })))
      throw new AppError('NOT_FOUND', 'Account not found', { field: 'accountId' });
    const row = await orderByClientOrderId(this.dataSource, accountId, clientOrderId);
    if (!row) throw new AppError('NOT_FOUND', `No order of this account has clientOrderId ${clientOrderId}`, { field: 'clientOrderId' });
    return this.cancel(claims, row.id, requestId);
  }

  /** The fills of several orders in one query (a DataLoader's batch), in the order of `orderIds`. */
  async fillsOf(orderIds: readonly string[]): Promise<TradeView[][]> {
    const rows: TradeRow[] = await this.dataSource.query('SELECT * FROM trades WHERE order_id = ANY($1::uuid[]) ORDER BY seq', [orderIds]);
    const byOrder = new Map<string, TradeView[]>(orderIds.map((id) => [id, []]));
    for (const row of rows) byOrder.get(row.order_id)?.push(presentTrade(row));
    return orderIds.map((id) => byOrder.get(id)!);
  }

  private get schedule() {
    return { rate: this.options.commissionRate, minimum: this.options.minimumCommission };
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
    if (args.symbol !== undefined && args.symbol !== null && (typeof args.symbol !== 'string' || !SYMBOL.test(args.symbol))) {
      throw new AppError('BAD_USER_INPUT', 'symbol must be an instrument symbol: 1 to 12 upper-case letters, digits or dots', {
        field: 'symbol',
      });
    }
    const scope = `trades:${accountId}`;
    const after = this.cursors.decode<{ s: string }>(args.cursor, scope, ['s']);
    const rows: TradeRow[] = await this.dataSource.query(
      `SELECT * FROM trades WHERE account_id = $1 AND ($2::text IS NULL OR symbol = $2) AND ($3::timestamptz IS NULL OR executed_at >= $3)
          AND ($4::timestamptz IS NULL OR executed_at < $4) AND ($5::bigint IS NULL OR seq < $5) ORDER BY seq DESC LIMIT $6`,
      [accountId, args.symbol ?? null, range.from, range.to, after?.s ?? null, limit + 1],
    );
    return this.cursors.page(rows, limit, scope, (last) => ({ s: String(last.seq) }), presentTrade);
  }
}

/** A trailing stop's first stop, from the current price (its first water mark); other orders as they are. */
function withTrailingStop(request: OrderRequest, instrument: Instrument): OrderRequest {
  if (request.type !== 'TRAILING_STOP') return request;
  const stop = trailingStop(
    request.side,
    instrument.lastPrice,
    { price: request.trailPrice, percent: request.trailPercent },
    instrument.tickSize,
  );
  if (stop.lte(0))
    throw new AppError('UNPROCESSABLE', `The trail is wider than the price ${instrument.lastPrice}`, {
      field: request.trailPrice ? 'trailPrice' : 'trailPercent',
    });
  return { ...request, stopPrice: stop.toFixed() };
}

/** Stands in for the order id in an idempotency key's row until the order exists (same transaction). */
/** Orders by Idempotency-Key: the key keeps the order's id (a placeholder until the order row exists). */
export const orderIdempotency = new IdempotencyKeys<string>('order_idempotency_keys', 'order_id', '00000000-0000-0000-0000-000000000000');
