import Decimal from 'decimal.js';
import type { DataSource, EntityManager } from 'typeorm';
import { queryPrepared, type PreparedStatement } from '@trading/db';
import type { Logger } from '@trading/logging';
import { inSpan } from '@trading/tracing';
import { startPeriodic, type PeriodicTask } from '@trading/service';
import type { TradingHours } from '../market/trading-hours';
import { quoteOf, type QuoteSource } from '../market-data/quote';
import type { BankingClient } from './clients';
import { fillAmounts, type CommissionSchedule } from './money';
import {
  activateChildren,
  announceClose,
  closeOrder,
  orderClosed,
  orderUpdated,
  TRADE_EXECUTED,
  writeEvents,
  type OrderRow,
  type OutboxEvent,
} from './order-store';
import { cancelSiblings, lockSiblings, reduceSiblings } from './oco-legs';
import { floorToLot } from './order-rules';
import { finishReplacement } from './replacement';

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

/** An instrument's quote for one pass, as GET /market/quotes publishes it. */
interface PassQuote {
  /** The last price: what stops trigger on. */
  last: Decimal;
  bid: Decimal;
  ask: Decimal;
  bidSize: Decimal;
  askSize: Decimal;
  lot: string;
}

/**
 * The quoted ask and bid in SQL, from the instrument `i` and the spread ($1), exactly as
 * `bidAsk` computes them (quote.ts): half the spread of the last price rounded up to whole
 * ticks, at least one; the bid never below one tick.
 */
const HALF_SPREAD = 'greatest(ceil(i.last_price * $1::numeric / 2 / i.tick_size), 1) * i.tick_size';
export const ASK_SQL = `(i.last_price + ${HALF_SPREAD})`;
export const BID_SQL = `greatest(i.last_price - ${HALF_SPREAD}, least(i.tick_size, i.last_price))`;

/** Orders that wait for a stop price (a trailing stop's moves with the best price seen). */
const STOP_TYPES = "('STOP', 'STOP_LIMIT', 'TRAILING_STOP')";
const STOP_REACHED = "CASE o.side WHEN 'BUY' THEN i.last_price >= o.stop_price ELSE i.last_price <= o.stop_price END";
/** The quote allows a fill now: a buy's limit and collar reach the ask, a sell's limit the bid (a stop must also have been or now be triggered). */
const MARKETABLE = `(o.limit_price IS NULL OR CASE o.side WHEN 'BUY' THEN ${ASK_SQL} <= o.limit_price ELSE ${BID_SQL} >= o.limit_price END)
        AND (o.side = 'SELL' OR o.collar_price IS NULL OR ${ASK_SQL} <= o.collar_price)`;
/** Price-time priority: market orders, then the best limit, then the oldest. */
const PRIORITY = "(o.limit_price IS NULL) DESC, CASE o.side WHEN 'BUY' THEN -o.limit_price ELSE o.limit_price END, o.seq";

/** A working order: open, and not frozen by a replacement under way. */
const WORKING = "o.status IN ('NEW', 'PARTIALLY_FILLED') AND o.replaced_by_order_id IS NULL";
/** Orders that trade at a price: market and limit orders, and stops once triggered. */
const TRADES_AT_A_PRICE = "(o.type IN ('MARKET', 'LIMIT') OR o.triggered_at IS NOT NULL)";
/** IOC and FOK orders are read by their own branch of `WHERE_TO_LOOK`, whatever their price. */
const IMMEDIATE_ELSEWHERE = " AND o.time_in_force NOT IN ('IOC', 'FOK')";
/**
 * A working order `o` that can do something at its instrument `i`'s quote: marketable, a stop
 * the last price has reached, or an IOC/FOK order (filled or cancelled in its first pass), of an
 * instrument not halted. This decides; `WHERE_TO_LOOK` only finds the rows to decide on. $1 is
 * the quoted spread.
 */
export const CAN_ACT = `i.tradable AND (
    o.time_in_force IN ('IOC', 'FOK')
    OR (o.type IN ${STOP_TYPES} AND o.triggered_at IS NULL AND ${STOP_REACHED})
    OR (${TRADES_AT_A_PRICE} AND ${MARKETABLE}))`;

/** What the engine reads of an order to decide on it. */
const CANDIDATE_COLUMNS = [
  'id',
  'symbol',
  'side',
  'account_id',
  'type',
  'time_in_force',
  'quantity',
  'filled_quantity',
  'limit_price',
  'stop_price',
  'collar_price',
  'triggered_at',
  'seq',
]
  .map((c) => `o.${c}`)
  .join(', ');

/**
 * Every order that `CAN_ACT` could accept, and few others, read through the engine's indexes
 * (migration 070) as one range per tradable instrument and kind: the IOC/FOK orders, the stops
 * the price has reached on either side, the orders with no limit, and the limits the quote has
 * reached (a buy's the ask, a sell's the bid). The kinds do not overlap, so no order comes
 * twice. An order resting away from the quote is never read, so a large book costs a pass
 * nothing (reading every working order and testing each cost PostgreSQL 27 ms per pass with
 * 25,000 of them).
 */
const WHERE_TO_LOOK = `
  instruments i CROSS JOIN LATERAL (
    ${[
      "o.time_in_force IN ('IOC', 'FOK')",
      `o.type IN ${STOP_TYPES} AND o.triggered_at IS NULL AND o.side = 'BUY' AND o.stop_price <= i.last_price`,
      `o.type IN ${STOP_TYPES} AND o.triggered_at IS NULL AND o.side = 'SELL' AND o.stop_price >= i.last_price`,
      // No OR of the two in one branch: PostgreSQL would read the whole side to test it.
      `${TRADES_AT_A_PRICE} AND o.side = 'BUY' AND o.limit_price IS NULL`,
      `${TRADES_AT_A_PRICE} AND o.side = 'BUY' AND o.limit_price >= ${ASK_SQL}`,
      `${TRADES_AT_A_PRICE} AND o.side = 'SELL' AND o.limit_price IS NULL`,
      `${TRADES_AT_A_PRICE} AND o.side = 'SELL' AND o.limit_price <= ${BID_SQL}`,
    ]
      .map(
        (kind, n) =>
          `SELECT ${CANDIDATE_COLUMNS} FROM orders o WHERE o.symbol = i.symbol AND ${WORKING} AND ${kind}${n ? IMMEDIATE_ELSEWHERE : ''}`,
      )
      .join('\n    UNION ALL ')}
  ) o`;

/**
 * The working orders that can do something at the current quote (`CAN_ACT`). An order resting
 * away from the market costs nothing per pass, in the engine or in PostgreSQL, so thousands of
 * them can neither starve anyone else's market order nor load the database.
 *
 * Each row says how much its order could still take (`remaining`, when `can_trade`), whether it
 * must be looked at even with no liquidity for it (`must_look`: an IOC/FOK to cancel, a stop to
 * trigger), and its place in its account's queue on that symbol and side (`turn`, by price-time
 * priority). Rows come first turns first, so a cut at the limit keeps every account's best orders.
 */
const WORTH_A_LOOK: PreparedStatement = {
  name: 'engine-worth-a-look',
  text: `
  SELECT o.id, o.symbol, o.side, o.account_id, (o.quantity - o.filled_quantity)::text AS remaining,
         (${TRADES_AT_A_PRICE} OR ${STOP_REACHED}) AND ${MARKETABLE} AS can_trade,
         o.time_in_force IN ('IOC', 'FOK') OR (o.type IN ${STOP_TYPES} AND o.triggered_at IS NULL) AS must_look,
         row_number() OVER (PARTITION BY o.symbol, o.side, o.account_id ORDER BY ${PRIORITY}) AS turn
  FROM ${WHERE_TO_LOOK}
  WHERE ${CAN_ACT}
  ORDER BY turn, o.symbol, ${PRIORITY}
  LIMIT 2000`,
};

/** DAY orders past their session (a partial index on working orders that expire). */
const EXPIRED: PreparedStatement = {
  name: 'engine-expired',
  text: `SELECT o.id FROM orders o WHERE ${WORKING} AND o.expires_at IS NOT NULL AND o.expires_at <= now() ORDER BY o.seq LIMIT 500`,
};

/** Placements (and replacements) whose request died before the hold was confirmed: a partial index on ACCEPTED orders. */
const UNCONFIRMED_REPLACEMENTS: PreparedStatement = {
  name: 'engine-unconfirmed-replacements',
  text: "SELECT id FROM orders WHERE status = 'ACCEPTED' AND replaces_order_id IS NOT NULL AND created_at < now() - make_interval(secs => $1) LIMIT 100",
};
const UNCONFIRMED_PLACEMENTS: PreparedStatement = {
  name: 'engine-unconfirmed-placements',
  text: "SELECT id, user_id, account_id FROM orders WHERE status = 'ACCEPTED' AND replaces_order_id IS NULL AND created_at < now() - make_interval(secs => $1) LIMIT 100",
};

const QUOTES: PreparedStatement = {
  name: 'engine-quotes',
  text: `SELECT symbol, currency, last_price::text AS "lastPrice", tick_size::text AS "tickSize", lot_size::text AS "lotSize",
           price_at AS "priceAt" FROM instruments`,
};

/** What each pass reads, as prepared statements (planned once per connection: planning these cost more than running them). */
export const ENGINE_READS = { WORTH_A_LOOK, EXPIRED, UNCONFIRMED_REPLACEMENTS, UNCONFIRMED_PLACEMENTS } as const;

/**
 * Trailing stops follow the price: a sell's water mark rises with it (a buy's falls), and the
 * stop with the mark, `trail_price` or `trail_percent` away (a sell's rounded down to the tick,
 * a buy's up). Only orders whose mark the current price beats are touched (a partial index on
 * untriggered trailing stops), each under its row lock (SKIP LOCKED: a cancel or replace holding
 * it goes first). Run once per pass, before the stops are looked at.
 */
const TRAIL: PreparedStatement = {
  name: 'engine-trail',
  text: `
  UPDATE orders o SET high_water_mark = i.last_price, updated_at = now(),
         stop_price = CASE o.side
           WHEN 'SELL' THEN greatest(i.tick_size, floor((i.last_price - coalesce(o.trail_price, i.last_price * o.trail_percent / 100)) / i.tick_size) * i.tick_size)
           ELSE ceil((i.last_price + coalesce(o.trail_price, i.last_price * o.trail_percent / 100)) / i.tick_size) * i.tick_size END
  FROM instruments i
  WHERE i.symbol = o.symbol AND o.id IN (
    SELECT t.id FROM orders t JOIN instruments j ON j.symbol = t.symbol
    WHERE t.type = 'TRAILING_STOP' AND t.triggered_at IS NULL AND t.status IN ('NEW', 'PARTIALLY_FILLED') AND t.replaced_by_order_id IS NULL
      AND CASE t.side WHEN 'SELL' THEN j.last_price > t.high_water_mark ELSE j.last_price < t.high_water_mark END
    FOR UPDATE OF t SKIP LOCKED)`,
};

interface Candidate {
  id: string;
  symbol: string;
  side: string;
  account_id: string;
  remaining: string;
  can_trade: boolean;
  must_look: boolean;
}

/**
 * Shares `pool` among accounts wanting `demands` (in their order): equal shares in whole lots,
 * what an account does not need handed on to the others; when fewer lots are left than
 * accounts still wanting, one lot each in turn from `first`, so the leftovers go round from
 * pass to pass instead of always to the same accounts.
 */
export function shareLiquidity(pool: Decimal.Value, lot: string, demands: readonly Decimal[], first = 0): Decimal[] {
  const given = demands.map(() => new Decimal(0));
  const short = (i: number) => demands[i]!.minus(given[i]!);
  let left = new Decimal(pool);
  let wanting = demands.map((_, i) => i).filter((i) => short(i).gt(0));
  while (wanting.length > 0) {
    const share = floorToLot(left.div(wanting.length), lot);
    if (share.lte(0)) break;
    for (const i of wanting) {
      const take = Decimal.min(share, short(i));
      given[i] = given[i]!.plus(take);
      left = left.minus(take);
    }
    wanting = wanting.filter((i) => short(i).gt(0));
  }
  for (let k = 0; k < wanting.length; k++) {
    const i = wanting[(first + k) % wanting.length]!;
    const take = Decimal.min(lot, short(i));
    if (take.gt(left)) continue;
    given[i] = given[i]!.plus(take);
    left = left.minus(take);
  }
  return given;
}

/**
 * A stop not yet triggered is triggered (marked, in the fill's transaction) once the last price
 * reaches its stop: a buy's at or above, a sell's at or below. False while it waits; other
 * orders, and stops triggered before, go on at once.
 */
async function triggerStop(tx: EntityManager, order: OrderRow, last: Decimal): Promise<boolean> {
  const stop = order.type === 'STOP' || order.type === 'STOP_LIMIT' || order.type === 'TRAILING_STOP';
  if (!stop || order.triggered_at) return true;
  const triggered = order.side === 'BUY' ? last.gte(order.stop_price!) : last.lte(order.stop_price!);
  if (!triggered) return false;
  await tx.query('UPDATE orders SET triggered_at = now(), updated_at = now() WHERE id = $1', [order.id]);
  return true;
}

/** Whether the order may trade at `price`: a buy's limit and collar reach it, a sell's limit does. */
function marketableAt(order: OrderRow, price: Decimal): boolean {
  const limit = order.limit_price === null ? null : new Decimal(order.limit_price);
  if (order.side !== 'BUY') return !limit || price.gte(limit);
  const collar = order.collar_price === null ? null : new Decimal(order.collar_price);
  return (!limit || price.lte(limit)) && (!collar || price.lte(collar));
}

/**
 * What the order fills now at `price`: its remainder, at most the whole lots `available` to it.
 * Zero when it is not marketable or there is nothing for it; an IOC or FOK is then cancelled, as
 * is a FOK that cannot fill entirely.
 */
async function fillableQuantity(tx: EntityManager, order: OrderRow, price: Decimal, available: Decimal, lot: string): Promise<Decimal> {
  const immediate = order.time_in_force === 'IOC' || order.time_in_force === 'FOK';
  if (!marketableAt(order, price)) {
    if (immediate)
      await closeOrder(
        tx,
        order,
        'CANCELLED',
        `${order.time_in_force}: not marketable at the ${order.side === 'BUY' ? 'ask' : 'bid'} ${price.toString()}`,
      );
    return new Decimal(0);
  }
  const remaining = new Decimal(order.quantity).minus(order.filled_quantity);
  const quantity = Decimal.min(remaining, floorToLot(Decimal.max(available, 0), lot));
  if (order.time_in_force === 'FOK' && quantity.lt(remaining)) {
    await closeOrder(tx, order, 'CANCELLED', `FOK: only ${quantity.toString()} available at ${price.toString()}`);
    return new Decimal(0);
  }
  if (quantity.isZero() && immediate) await closeOrder(tx, order, 'CANCELLED', `${order.time_in_force}: no liquidity`);
  return quantity;
}

/**
 * After a trade: its events (with those of the OCO legs it reduces to its remainder), then the
 * OCO legs it cancels, then (filled) a group's children started and its close announced, or an
 * IOC's unfilled remainder cancelled.
 */
async function afterTrade(
  tx: EntityManager,
  order: OrderRow,
  updated: OrderRow,
  done: boolean,
  executed: OutboxEvent,
  siblings: readonly OrderRow[],
  schedule: CommissionSchedule,
): Promise<void> {
  // A simple order has no legs to cancel or children to start: its trade, its state and (filled)
  // its close go out in one statement, in the order the consumers expect them.
  const simple = !siblings.length && updated.order_class === 'SIMPLE';
  const closed = done && simple ? orderClosed(updated) : null;
  // A leg partly filled: the other legs go on for its remainder (a buy's hold with it), announced after its own state.
  const reduced = await reduceSiblings(tx, updated, done, siblings, schedule);
  await writeEvents(tx, [executed, orderUpdated(updated), ...(closed ? [closed] : []), ...reduced]);
  await cancelSiblings(tx, updated, done, siblings);
  if (done && !simple) {
    await activateChildren(tx, updated);
    await announceClose(tx, updated);
  } else if (!done && order.time_in_force === 'IOC') await closeOrder(tx, updated, 'CANCELLED', 'IOC: unfilled remainder cancelled');
}

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
      () => (this.paused ? Promise.resolve() : this.runOnce()),
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

  async runOnce(): Promise<void> {
    await this.expire();
    await this.sweepUnconfirmed();
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
        if (order) await closeOrder(tx, order, 'EXPIRED', `${order.time_in_force} order expired at the end of the session`);
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
