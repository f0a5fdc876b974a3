import { randomUUID } from 'node:crypto';
import Decimal from 'decimal.js';
import type { DataSource } from 'typeorm';
import { idempotencyOwner, parseIdempotencyKey, type Claims } from '@trading/auth';
import { requestHash } from '@trading/db';
import { AppError } from '@trading/errors';
import type { Logger } from '@trading/logging';
import type { InstrumentsService } from '../instruments/instruments.service';
import type { TradingHours } from '../market/trading-hours';
import type { AccountsDirectory, OwnedAccount } from '@trading/accounts-directory';
import type { BankingClient } from './clients';
import { cancelWorking, closingSell, earlierCloses, symbolsToClose } from './closing-positions';
import { finishReplacement } from './replacement';
import { orderByClientOrderId, parseClientOrderId, symbolFilter } from './order-lookup';
import { orderIdempotency } from './order-idempotency';
import { OrderInserts } from './order-insert';
import { checkLeg, confirmGroup } from './order-legs';
import { confirmHold, recordPlacement, type Placement } from './placing';
import { recordReplacement, replacementTerms } from './replacing';
import { checkReplaceableClass } from './replacing-legs';
import { reserve, type ReservationTerms } from './reservation';
import { holding, sellable } from './sellable';
import { buyingPowerRefusal, estimatedCash, positionChange, presentWhatIf, refusing, whatIfWarnings, type Refusal } from './what-if';
import { closeOrder, orderById, presentOrder, type OrderRow, type OrderView } from './order-store';
import {
  checkInstrumentRules,
  checkPriceBand,
  ORDER_TYPES,
  parseOrderRequest,
  parseUuid,
  SHORT_SELLING_ALLOWED,
  TIME_IN_FORCE_BY_TYPE,
  TIMES_IN_FORCE,
  type OrderRequest,
  parseCloseRequest,
  parseLegs,
  ORDER_CLASSES,
  type LegRequest,
  type OrderClass,
  parseReplaceRequest,
  withTrailingStop,
  type CloseRequest,
} from './order-rules';

export { orderIdempotency } from './order-idempotency';

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

export class OrdersService {
  /** Writes placed orders' rows. */
  private readonly inserts: OrderInserts;

  constructor(
    private readonly dataSource: DataSource,
    private readonly instruments: InstrumentsService,
    private readonly accounts: AccountsDirectory,
    private readonly banking: BankingClient,
    private readonly hours: TradingHours,
    private readonly options: OrdersOptions,
    private readonly logger: Logger,
  ) {
    this.inserts = new OrderInserts(dataSource, options);
  }

  // ---- rules ------------------------------------------------------------------------------

  async rules(accountId: string, symbol: unknown) {
    symbolFilter(symbol);
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
      tradingHours: this.hours.description,
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
    const rejectReasons: Refusal[] = [];
    const instrument = await this.instruments.find(request.symbol);
    if (!instrument) throw new AppError('UNPROCESSABLE', `Unknown symbol ${request.symbol}`, { field: 'symbol' });
    refusing(rejectReasons, () => {
      checkInstrumentRules(request, instrument);
      request = withTrailingStop(request, instrument);
      checkPriceBand(request, instrument, this.options.priceBand);
    });
    // Each leg on its own rules; the buys among them hold their cash too.
    const legs = group.legs.map((leg) => {
      const reservation = refusing(rejectReasons, () => checkLeg(leg, instrument, this.options.priceBand, this.terms));
      return { leg, held: leg.request.side === 'BUY' && reservation ? reservation.holdAmount : new Decimal(0) };
    });
    if (account.status !== 'ACTIVE') rejectReasons.push({ field: 'accountId', message: `The account is ${account.status}` });
    const currency = instrument.currency;
    const r = reserve(request, instrument, this.terms);
    const cash = estimatedCash(request, r, currency, this.terms.schedule);
    const balance = await this.banking.balance(request.accountId, currency, claims);
    const available = new Decimal(balance.availableToTrade);
    const reserved = (cash.buy ? r.holdAmount : new Decimal(0)).plus(legs.reduce((sum, l) => sum.plus(l.held), new Decimal(0)));
    const short = buyingPowerRefusal(reserved, available, currency);
    if (short) rejectReasons.push(short);
    const position = cash.buy
      ? null
      : positionChange(await sellable(this.dataSource.manager, account, request.symbol), cash.quantity, request.symbol, rejectReasons);
    const warnings = whatIfWarnings(request, r, this.hours.isOpen(), this.options.collar);
    return presentWhatIf({
      request,
      instrument,
      accountType: account.type,
      reservation: r,
      cash,
      balance,
      available,
      reserve: reserved,
      position,
      orderClass: group.orderClass,
      legs,
      rejectReasons,
      warnings,
    });
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
    const keyOwner = idempotencyOwner(claims);
    const instrument = checkInstrumentRules(placed, await this.instruments.find(placed.symbol));
    const request = withTrailingStop(placed, instrument);
    checkPriceBand(request, instrument, this.options.priceBand);
    const legs = group.legs.map((leg) => ({ ...leg, reservation: checkLeg(leg, instrument, this.options.priceBand, this.terms) }));
    const account = await this.tradingAccount(request, claims, requestId);
    const buy = request.side === 'BUY';
    // A plain buy writes one row (its hold comes next, in banking), with its key's claim: one
    // statement, its own transaction, without the round trips of BEGIN and COMMIT. Anything more
    // (a sell, legs, or a key that exists) is the transaction below.
    const oneRow = buy && !legs.length;
    if (key && !oneRow) {
      const earlier = await this.earlierRow(keyOwner, key, hash);
      if (earlier) return earlier;
    }
    const placement: Placement = {
      userId: claims.sub,
      clientOrderId: request.clientOrderId ?? randomUUID(),
      request,
      instrument,
      account,
      reservation: reserve(request, instrument, this.terms),
      expiresAt: request.timeInForce === 'DAY' ? this.hours.sessionEnd() : null,
      orderClass: group.orderClass,
      legs,
      claim: key ? { owner: keyOwner, key, hash } : undefined,
    };
    const recorded =
      (oneRow && (await this.insertFirst(placement))) ||
      (await this.dataSource.transaction((tx) => recordPlacement(tx, this.inserts, placement)));
    if ('replay' in recorded) return (await this.earlierRow(keyOwner, key!, hash))!;
    return this.confirm(recorded, claims.sub, legs.length > 0, buy);
  }

  /** The order's account, which must be the caller's and able to trade; a sell's comes with its holding in the symbol. */
  private async tradingAccount(request: OrderRequest, claims: Claims, requestId: string | undefined): Promise<OwnedAccount> {
    const account = await this.ownedAccount(request.accountId, claims, requestId, request.side === 'SELL' ? request.symbol : undefined);
    if (account.status !== 'ACTIVE')
      throw new AppError('UNPROCESSABLE', `The account is ${account.status}: it cannot trade`, { field: 'accountId' });
    return account;
  }

  /** A plain buy's one-statement placement (ACCEPTED, with its hold to come), or undefined for the transaction to decide. */
  private insertFirst(p: Placement): Promise<OrderRow | undefined> {
    const row = { reservation: p.reservation, status: 'ACCEPTED' as const, expiresAt: p.expiresAt, orderClass: p.orderClass };
    return this.inserts.first(p.userId, p.clientOrderId, p.request, p.instrument, row, p.claim);
  }

  /** A recorded order's holds in banking (a group's, or a buy's), then working; one that is not ACCEPTED is as it is. */
  private async confirm(recorded: OrderRow, userId: string, withLegs: boolean, buy: boolean): Promise<OrderRow> {
    let order = recorded;
    if (order.status !== 'ACCEPTED') return this.started(order);
    if (withLegs) return this.started(await confirmGroup(this.dataSource, this.banking, order, userId));
    if (buy) order = await confirmHold(this.dataSource, this.banking, order, userId);
    return this.started(order);
  }

  /** An order that must act at once (market, IOC, FOK) and now works: the engine is told to look now, not at its next pass. */
  private started(order: OrderRow): OrderRow {
    if (order.status === 'NEW' && (order.type === 'MARKET' || order.time_in_force === 'IOC' || order.time_in_force === 'FOK'))
      this.options.actNow?.();
    return order;
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

  /** What a reservation is reckoned with, from the options. */
  private get terms(): ReservationTerms {
    return {
      collar: this.options.collar,
      spread: this.options.spread,
      maxOrderValue: this.options.maxOrderValue,
      schedule: { rate: this.options.commissionRate, minimum: this.options.minimumCommission },
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
   * as it was and is a 422 naming the field. A sell pair's leg is replaced within its pair (replacing-legs.ts).
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
    checkReplaceableClass(existing, request);
    const proposed = replacementTerms(existing, request);
    const instrument = checkInstrumentRules(proposed, await this.instruments.find(proposed.symbol));
    const merged = withTrailingStop(proposed, instrument); // a trailing stop starts again from the current price
    checkPriceBand(merged, instrument, this.options.priceBand);
    if (account.status !== 'ACTIVE')
      throw new AppError('UNPROCESSABLE', `The account is ${account.status}: it cannot trade`, { field: 'accountId' });
    const recorded = await this.dataSource.transaction((tx) =>
      recordReplacement(tx, {
        claim: key ? { owner: keyOwner, key, hash } : undefined,
        userId: claims.sub,
        account,
        oldId: existing.id,
        merged,
        instrument,
        terms: this.terms,
        quantityChanged: request.quantity !== null,
        ocoGroupId: existing.oco_group_id,
        sessionEnd: () => this.hours.sessionEnd(),
      }),
    );
    if ('replay' in recorded) return this.answer((await this.earlierRow(keyOwner, key!, hash))!);
    if (merged.side !== 'BUY') return presentOrder(recorded);
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
    const { held, promised } = await this.dataSource.transaction((tx) => holding(tx, account, request.symbol));
    if (!instrument || held.lte(0)) throw new AppError('NOT_FOUND', `No position in ${request.symbol}`, { field: 'symbol' });
    return closingSell(request, held, promised, instrument.lotSize);
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
      const earlier = await earlierCloses(this.dataSource, owner, key);
      if (earlier) return earlier.map(presentOrder);
    }
    if (account.status !== 'ACTIVE')
      throw new AppError('UNPROCESSABLE', `The account is ${account.status}: it cannot trade`, { field: 'accountId' });
    await cancelWorking(this.dataSource, accountId, (id) => this.cancel(claims, id, requestId));
    const orders: OrderView[] = [];
    for (const symbol of await symbolsToClose(this.dataSource, this.accounts, accountId, claims, requestId)) {
      const row = await this.closeHolding(claims, accountId, symbol, key, requestId);
      if (row) orders.push(presentOrder(row));
    }
    return orders;
  }

  /** One holding's close in a close-all, remembered under `<key>:close:<symbol>`; null when nothing is (left) to close. */
  private async closeHolding(
    claims: Claims,
    accountId: string,
    symbol: string,
    key: string | null | undefined,
    requestId: string | undefined,
  ): Promise<OrderRow | null> {
    const request = { accountId, symbol, quantity: null, percentage: null };
    let order: OrderRequest;
    try {
      order = await this.closeOrderFor(claims, request, requestId);
    } catch (err) {
      if (err instanceof AppError && (err.code === 'NOT_FOUND' || err.code === 'CONFLICT')) return null; // nothing (left) to close
      throw err;
    }
    return this.submit(claims, order, key ? `${key}:close:${symbol}` : null, requestHash('closeAllPositions', request), requestId);
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

  private row(id: string): Promise<OrderRow | null> {
    return orderById(this.dataSource, id);
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
}
