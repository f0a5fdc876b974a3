import type Decimal from 'decimal.js';
import type { PreparedStatement } from '@trading/db';

/**
 * What the execution engine reads each pass, as prepared SQL: each instrument's quote (the bid
 * and ask GET /market/quotes publishes), the working orders worth a look, DAY orders past their
 * session, placements and replacements that never finished, and the trailing stops' new stops.
 */

/** An instrument's quote for one pass, as GET /market/quotes publishes it. */
export interface PassQuote {
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

export const QUOTES: PreparedStatement = {
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
export const TRAIL: PreparedStatement = {
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

export interface Candidate {
  id: string;
  symbol: string;
  side: string;
  account_id: string;
  remaining: string;
  can_trade: boolean;
  must_look: boolean;
}
