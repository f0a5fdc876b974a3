import Decimal from 'decimal.js';
import type { DataSource, EntityManager } from 'typeorm';
import { queryPrepared } from '@trading/db';
import type { Logger } from '@trading/logging';
import { inSpan } from '@trading/tracing';
import { startPeriodic, type PeriodicTask } from '@trading/service';
import type { TradingHours } from '../market/trading-hours';
import { quoteOf, type QuoteSource } from '../market-data/quote';
import type { BankingClient } from './clients';
import { fillAmounts, type CommissionSchedule } from './money';
import { closeOrder, TRADE_EXECUTED, type OrderRow, type OutboxEvent } from './order-store';
import { ENGINE_READS, QUOTES, TRAIL, type Candidate, type PassQuote } from './engine-reads';
import { afterTrade, fillableQuantity, shareLiquidity, triggerStop } from './fills';
import { lockSiblings } from './oco-legs';
import { finishReplacement } from './replacement';

const { WORTH_A_LOOK, EXPIRED, UNCONFIRMED_REPLACEMENTS, UNCONFIRMED_PLACEMENTS } = ENGINE_READS;

export interface EngineOptions {
  intervalMs: number;
  /** Quantity per instrument and side per pass, shared across accounts (at most the size quoted on that side). */
  liquidity: string;
  /** The quoted bid-ask spread (a fraction of the last price): buys fill at the ask, sells at the bid. */
  spread: string;
  commission: CommissionSchedule;
  /** ACCEPTED orders older than this lost their placing request (crash): their hold is released and they are rejected. */
  acceptTimeoutMs?: number;
  /** Told after a pass that filled something (its settlement events are in the outbox: the relay may send them now). */
  afterFills?: () => void;
}

/** How often timed passes expire orders and sweep unconfirmed placements. */
const HOUSEKEEPING_MS = 1000;

/**
 * The paper market's execution engine. Each pass: expire DAY orders past their session,
 * clean up orders whose placement never finished, then fill what the current quote allows of
 * the orders that can act, at most the size quoted on their side (and `liquidity`) per
 * instrument and side per pass, shared equally across the accounts with orders there (so big
 * orders fill in parts and never stall small ones), each account's orders in price-time
 * priority. Every fill locks its order (SKIP LOCKED: a cancel holding the lock wins, and several
 * OMS instances never fill one order twice) and writes the trade, the new order state and the
 * settlement event in one transaction.
 *
 * Rules: the pass reads each instrument's quote once (the bid and ask GET /market/quotes
 * publishes). Market buys fill at the ask (never above their collar), market sells at the bid;
 * a limit buy fills when the ask is at or below its limit, at the ask, and a limit sell when the
 * bid is at or above its limit, at the bid. Stops trigger when the last price reaches the stop
 * (buy: at or above, sell: at or below) and then act as market (STOP, TRAILING_STOP) or limit
 * (STOP_LIMIT) orders. IOC fills what it can in its first pass and cancels the rest; FOK fills
 * entirely in its first pass or is cancelled.
 */
export class ExecutionEngine {
  private task: PeriodicTask | undefined;
  private paused = false;
  /** Passes run so far: who gets the last odd lots rotates with it. */
  private passes = 0;
  /** When a timed pass last did the housekeeping. */
  private keptAt = 0;

  constructor(
    private readonly dataSource: DataSource,
    private readonly banking: BankingClient,
    private readonly hours: TradingHours,
    private readonly options: EngineOptions,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.task ??= startPeriodic(
      'execution engine',
      this.options.intervalMs,
      () => (this.paused ? Promise.resolve() : this.timedPass()),
      this.logger,
    );
  }

  async stop(): Promise<void> {
    await this.task?.stop();
    this.task = undefined;
  }

  /** Stops the timer's passes (tests drive `runOnce` themselves); waits for a pass under way. */
  async pause(): Promise<void> {
    this.paused = true;
    await this.task?.idle();
  }

  resume(): void {
    this.paused = false;
  }

  /** A pass now (an order that must act at once has started working), not at the next interval. */
  wake(): void {
    if (!this.paused) this.task?.wake();
  }

  /**
   * A pass of the timer, or one woken for an order: its housekeeping (expiry, placements and
   * replacements left unconfirmed for a minute) at most once a second. Expiry is due at a
   * session's end and the sweep after a minute, so a second late is nothing; run every pass,
   * they were half the statements of an idle engine.
   */
  private timedPass(): Promise<void> {
    const housekeeping = Date.now() - this.keptAt >= HOUSEKEEPING_MS;
    if (housekeeping) this.keptAt = Date.now();
    return this.runOnce(housekeeping);
  }

  /** One pass: expiry and the sweep of unconfirmed placements (unless `housekeeping` is false), then every order that may act. */
  async runOnce(housekeeping = true): Promise<void> {
    if (housekeeping) {
      await this.expire();
      await this.sweepUnconfirmed();
    }
    if (!this.hours.isOpen()) return;
    // The pass fills at the quotes the API publishes now (quoteOf), prices and sizes alike.
    const quotes = new Map<string, PassQuote>();
    for (const source of await queryPrepared<QuoteSource>(this.dataSource, QUOTES, [])) {
      const q = quoteOf(source, this.options.spread);
      quotes.set(source.symbol, {
        last: new Decimal(q.lastPrice),
        bid: new Decimal(q.bid),
        ask: new Decimal(q.ask),
        bidSize: new Decimal(q.bidSize),
        askSize: new Decimal(q.askSize),
        lot: source.lotSize,
      });
    }
    await queryPrepared(this.dataSource, TRAIL, []);
    const working = await queryPrepared<Candidate>(this.dataSource, WORTH_A_LOOK, [this.options.spread]);
    const allotted = this.allot(working, quotes);
    let filled = false;
    for (const { id, symbol, side, account_id, must_look } of working) {
      const quote = quotes.get(symbol);
      if (!quote) continue;
      const key = `${symbol} ${side} ${account_id}`;
      const left = allotted.get(key) ?? new Decimal(0);
      // Nothing it could do this pass: not even a lock (an account's later orders wait for its earlier ones).
      if (left.isZero() && !must_look) continue;
      const used = await this.dataSource.transaction((tx) => this.work(tx, id, quote, left));
      allotted.set(key, left.minus(used));
      if (used.gt(0)) filled = true;
    }
    if (filled) this.options.afterFills?.();
  }

  /**
   * Each symbol's liquidity for this pass, per side (buys and sells have a pool each: the size
   * quoted at the ask and at the bid, at most `liquidity`), shared across the accounts with
   * orders that can trade: one account's huge orders take their share and fill over many passes,
   * and never hold up anyone else's. Within an account its orders take its share in price-time
   * priority. Keyed `symbol side account`.
   */
  private allot(working: readonly Candidate[], quotes: ReadonlyMap<string, PassQuote>): Map<string, Decimal> {
    const demand = new Map<string, Map<string, Decimal>>(); // `symbol side` -> account -> quantity wanted
    for (const o of working) {
      if (!o.can_trade || !quotes.has(o.symbol)) continue;
      const pool = `${o.symbol} ${o.side}`;
      const accounts = demand.get(pool) ?? new Map<string, Decimal>();
      demand.set(pool, accounts);
      accounts.set(o.account_id, (accounts.get(o.account_id) ?? new Decimal(0)).plus(o.remaining));
    }
    const first = this.passes++;
    const allotted = new Map<string, Decimal>();
    for (const [pool, accounts] of demand) {
      const [symbol, side] = pool.split(' ') as [string, string];
      const quote = quotes.get(symbol)!;
      const quoted = side === 'BUY' ? quote.askSize : quote.bidSize;
      const names = [...accounts.keys()];
      const shares = shareLiquidity(Decimal.min(this.options.liquidity, quoted), quote.lot, [...accounts.values()], first);
      names.forEach((account, i) => allotted.set(`${pool} ${account}`, shares[i]!));
    }
    return allotted;
  }

  /** One order against one quote; returns the quantity filled. */
  private async work(tx: EntityManager, id: string, quote: PassQuote, available: Decimal): Promise<Decimal> {
    const [order]: OrderRow[] = await tx.query(
      "SELECT * FROM orders WHERE id = $1 AND status IN ('NEW', 'PARTIALLY_FILLED') AND replaced_by_order_id IS NULL FOR UPDATE SKIP LOCKED",
      [id],
    );
    if (!order) return new Decimal(0);
    // The fill continues the trace of the request that placed the order.
    return inSpan('oms fill', { traceparent: order.trace_context, attributes: { 'order.id': id, 'order.symbol': order.symbol } }, () =>
      this.fill(tx, order, quote, available),
    );
  }

  private async fill(tx: EntityManager, order: OrderRow, quote: PassQuote, available: Decimal): Promise<Decimal> {
    // Buys take the ask, sells the bid: never a better price than the quote offers, and a
    // marketable limit gets the quote, not its limit.
    const price = order.side === 'BUY' ? quote.ask : quote.bid;
    if (!(await triggerStop(tx, order, quote.last))) return new Decimal(0);
    // Legs of one group (a bracket's exits, an OCO): all of them locked before one fills, so
    // together they never fill more than the group's quantity and are cancelled exactly once.
    const siblings = await lockSiblings(tx, order);
    if (!siblings) return new Decimal(0);
    const quantity = await fillableQuantity(tx, order, price, available, quote.lot);
    if (quantity.isZero()) return quantity;
    const { updated, done, executed } = await this.recordTrade(tx, order, quantity, price);
    await afterTrade(tx, order, updated, done, executed, siblings, this.options.commission);
    return quantity;
  }

  /**
   * A fill the market did not decide (the DEV sandbox): `quantity` at `price`, through the same
   * steps as a pass's fill (the trade, the order's state, its events, a group's legs and
   * children, the hold settled by banking from the events), so every money rule holds alike. The
   * quotes and last price are left as they are. The caller has locked the working order and
   * checked quantity and price; a stop not yet triggered is marked triggered. Null when a leg of
   * its group is locked or being replaced (the fill did not happen).
   */
  async fillAt(tx: EntityManager, order: OrderRow, quantity: Decimal, price: Decimal): Promise<OrderRow | null> {
    const stop = order.type === 'STOP' || order.type === 'STOP_LIMIT' || order.type === 'TRAILING_STOP';
    if (stop && !order.triggered_at) await tx.query('UPDATE orders SET triggered_at = now(), updated_at = now() WHERE id = $1', [order.id]);
    const siblings = await lockSiblings(tx, order);
    if (!siblings) return null;
    const { updated, done, executed } = await this.recordTrade(tx, order, quantity, price);
    await afterTrade(tx, order, updated, done, executed, siblings, this.options.commission);
    return updated;
  }

  /** A fill committed outside a pass: its settlement events may be sent now, as after a pass that filled. */
  filledOutsidePass(): void {
    this.options.afterFills?.();
  }

  /** The trade, and the order's new fill totals and state: its trade event for the outbox. */
  private async recordTrade(
    tx: EntityManager,
    order: OrderRow,
    quantity: Decimal,
    price: Decimal,
  ): Promise<{ updated: OrderRow; done: boolean; executed: OutboxEvent }> {
    const id = order.id;
    const valueAfter = new Decimal(order.filled_value).plus(quantity.times(price));
    const { gross, commission } = fillAmounts(order.filled_value, valueAfter, this.options.commission, order.currency);
    const net = order.side === 'BUY' ? gross.plus(commission).neg() : gross.minus(commission);
    const [trade] = await tx.query(
      `INSERT INTO trades (order_id, account_id, symbol, side, quantity, price, currency, gross_amount, commission, net_amount)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id, executed_at`,
      [
        id,
        order.account_id,
        order.symbol,
        order.side,
        quantity.toFixed(),
        price.toFixed(),
        order.currency,
        gross.toFixed(),
        commission.toFixed(),
        net.toFixed(),
      ],
    );
    const filled = new Decimal(order.filled_quantity).plus(quantity);
    const done = filled.eq(order.quantity);
    const [[updated]] = await tx.query(
      `UPDATE orders SET filled_quantity = $2, filled_value = $3, gross_amount = gross_amount + $4, commission = commission + $5,
              status = $6, filled_at = CASE WHEN $6 = 'FILLED' THEN now() END, updated_at = now() WHERE id = $1 RETURNING *`,
      [id, filled.toFixed(), valueAfter.toFixed(), gross.toFixed(), commission.toFixed(), done ? 'FILLED' : 'PARTIALLY_FILLED'],
    );
    const executed: OutboxEvent = {
      type: TRADE_EXECUTED,
      payload: {
        trade: {
          id: trade.id,
          orderId: id,
          accountId: order.account_id,
          symbol: order.symbol,
          side: order.side,
          quantity: quantity.toFixed(),
          price: price.toFixed(),
          currency: order.currency,
          grossAmount: gross.toFixed(),
          commission: commission.toFixed(),
          netAmount: net.toFixed(),
          executedAt: new Date(trade.executed_at).toISOString(),
        },
      },
    };
    return { updated, done, executed };
  }

  private async expire(): Promise<void> {
    const due = await queryPrepared<{ id: string }>(this.dataSource, EXPIRED, []);
    for (const { id } of due) {
      await this.dataSource.transaction(async (tx) => {
        const [order]: OrderRow[] = await tx.query(
          "SELECT * FROM orders WHERE id = $1 AND status IN ('NEW', 'PARTIALLY_FILLED') AND replaced_by_order_id IS NULL FOR UPDATE SKIP LOCKED",
          [id],
        );
        if (order) await expireOrder(tx, order);
      });
    }
  }

  /** Placement requests that died between recording the order and confirming its hold. */
  private async sweepUnconfirmed(): Promise<void> {
    const timeout = (this.options.acceptTimeoutMs ?? 60_000) / 1000;
    // A replace that died between freezing the old order and moving its hold: banking's move is
    // idempotent, so it is asked again; done or refused, the replace is finished either way.
    const replacing = await queryPrepared<{ id: string }>(this.dataSource, UNCONFIRMED_REPLACEMENTS, [timeout]);
    for (const { id } of replacing) await finishReplacement(this.dataSource, this.banking, id).catch(() => undefined); // banking down: next pass
    const stale = await queryPrepared<{ id: string; user_id: string | null; account_id: string }>(this.dataSource, UNCONFIRMED_PLACEMENTS, [
      timeout,
    ]);
    for (const { id, user_id, account_id } of stale) {
      if (!(await this.banking.releaseHold(id, { userId: user_id ?? 'unknown', accountId: account_id }))) continue; // banking down: next pass
      await this.dataSource.transaction(async (tx) => {
        const [order]: OrderRow[] = await tx.query("SELECT * FROM orders WHERE id = $1 AND status = 'ACCEPTED' FOR UPDATE SKIP LOCKED", [
          id,
        ]);
        if (order) await closeOrder(tx, order, 'REJECTED', 'The order could not be confirmed in time');
      });
    }
  }
}

/** A working order's expiry, as at the end of its session: closed EXPIRED, its hold released from the close event. */
export function expireOrder(tx: EntityManager, order: OrderRow): Promise<OrderRow> {
  return closeOrder(tx, order, 'EXPIRED', `${order.time_in_force} order expired at the end of the session`);
}
