import Decimal from 'decimal.js';
import { Pool } from 'pg';
import { BOOK_BALANCE_DRIFT_SQL } from '@trading/banking-service';
import { withDatabaseName } from '@trading/db';
import { TEST_POSTGRES_URL } from '@trading/testing';
import { DEMO_POSITIONS } from '@trading/platform';
import { until } from './orders-platform';
import type { TestPlatform } from './test-platform';

/**
 * The settlement invariants (each fill applied once, the ledger balanced, holdings the sum of
 * their fills), read straight from the services' databases after a run: shared by the
 * randomised-run and the crash specs.
 */

export type ServiceName = 'banking' | 'accounts' | 'oms';

/** Small pools on the banking, accounts and OMS databases of a test platform. */
export class ServiceDatabases {
  private readonly pools = {} as Record<ServiceName, Pool>;

  constructor(p: TestPlatform) {
    for (const name of ['banking', 'accounts', 'oms'] as const) {
      const pool = new Pool({ connectionString: withDatabaseName(TEST_POSTGRES_URL, `${p.config.PLATFORM_DB_PREFIX}${name}`), max: 3 });
      // A crashed service's database sessions are all cut, these included: the pool just reconnects.
      pool.on('error', () => undefined);
      this.pools[name] = pool;
    }
  }

  async query(name: ServiceName, sql: string, params: unknown[] = []): Promise<any[]> {
    try {
      return (await this.pools[name].query(sql, params)).rows;
    } catch (err) {
      // 57P01: our idle connection was cut by a simulated crash before the pool noticed; once more on a fresh one.
      if ((err as { code?: string }).code !== '57P01') throw err;
      return (await this.pools[name].query(sql, params)).rows;
    }
  }

  async end(): Promise<void> {
    for (const pool of Object.values(this.pools)) await pool.end();
  }
}

/** Ends what a settlement-stream spec started: its databases' pools, the platform, and the stream it left on the test Redis. */
export async function stopStreamSpec(
  p?: TestPlatform,
  db?: ServiceDatabases,
  redis?: { del(key: string): Promise<unknown>; destroy(): unknown },
): Promise<void> {
  await db?.end();
  await p?.stop();
  if (redis) {
    if (p) await redis.del(p.events.stream);
    redis.destroy();
  }
}

export interface SettlementProgress {
  /** Outbox events the relay has not published yet. */
  unpublished: number;
  /** Every outbox event applied by banking and every fill by accounts. */
  applied: boolean;
  /** Fills (trade.executed events) the OMS wrote. */
  trades: number;
  /** Settlement events the OMS wrote (fills and order closes). */
  events: number;
}

/** The outbox events banking books (fills and order closes). */
const BOOKED = "type IN ('trade.executed', 'order.closed')";

export async function settlementProgress(db: ServiceDatabases): Promise<SettlementProgress> {
  const [{ n: unpublished }] = await db.query('oms', 'SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL');
  // order.updated events are for clients' live order events: nothing is booked on them.
  const [{ n: events }] = await db.query('oms', `SELECT count(*)::int AS n FROM outbox WHERE ${BOOKED}`);
  const [{ n: banked }] = await db.query('banking', 'SELECT count(*)::int AS n FROM settlement_events');
  const [{ n: trades }] = await db.query('oms', "SELECT count(*)::int AS n FROM outbox WHERE type = 'trade.executed'");
  const [{ n: booked }] = await db.query('accounts', 'SELECT count(*)::int AS n FROM settlement_events');
  return { unpublished, applied: banked === events && booked === trades, trades, events };
}

/** Waits until the relay has published everything and both consumer groups have applied it. */
export function settled(db: ServiceDatabases): Promise<SettlementProgress> {
  return until(
    () => settlementProgress(db),
    (s) => s.unpublished === 0 && s.applied,
    'settlement to catch up',
  );
}

/** Customer cash books (free and held) below zero, per account and currency: none, at any moment. */
/**
 * Money spent beyond what was there: held cash below zero, or settled plus unsettled cash below
 * zero (unsettled sale proceeds may pay for buys, so CUSTOMER_CASH alone may dip until they settle).
 */
export async function negativeCash(db: ServiceDatabases): Promise<unknown[]> {
  return db.query(
    'banking',
    `SELECT account_id, currency, CASE WHEN book = 'CUSTOMER_HELD' THEN 'CUSTOMER_HELD' ELSE 'CUSTOMER_CASH+UNSETTLED' END AS book, sum(amount) AS total
       FROM postings WHERE book IN ('CUSTOMER_CASH', 'CUSTOMER_UNSETTLED', 'CUSTOMER_HELD') GROUP BY 1, 2, 3 HAVING sum(amount) < 0`,
  );
}

/**
 * Every invariant, once settlement has caught up and no order is working any more:
 *  - each event id the OMS wrote is applied exactly once by banking, and each fill exactly once by accounts;
 *  - every journal entry balances, so does each account's sub-ledger and the whole ledger; one TRADE entry per fill;
 *  - no held cash below zero, nor settled plus unsettled cash;
 *  - no order open, no hold left on a closed order, a captured hold took exactly what its fills cost;
 *  - every holding is its seed plus its fills, and none is short.
 */
export interface InvariantOptions {
  /** The holdings the run started from (default the demo seed). */
  seedPositions?: ReadonlyArray<{ accountId: string; symbol: string; quantity: string }>;
  /**
   * Buy orders whose placement met banking down (answered 503: the hold neither confirmed nor
   * given back) and that may still be ACCEPTED: the OMS's sweep rejects them once its accept
   * timeout (60 s) has passed. While ACCEPTED they must have no fill, and a hold banking may have
   * made for them is still HELD with nothing settled; it is the only cash left held.
   */
  unconfirmed?: readonly string[];
}

export async function expectInvariants(db: ServiceDatabases, options: InvariantOptions = {}): Promise<void> {
  const seedPositions = options.seedPositions ?? DEMO_POSITIONS;
  const unconfirmed = new Set(options.unconfirmed ?? []);
  const progress = await settlementProgress(db);
  expect(progress).toMatchObject({ unpublished: 0, applied: true });
  await expectAppliedOnce(db);
  await expectLedgerBalanced(db, progress.trades);
  await expectHoldsSettled(db, unconfirmed);
  await expectHoldings(db, seedPositions);
}

/** Each event applied once: the same ids on both sides (settlement_events is keyed by event id). */
async function expectAppliedOnce(db: ServiceDatabases): Promise<void> {
  const ids = (rows: Array<{ event_id: string }>) => rows.map((r) => r.event_id).sort();
  const written = ids(await db.query('oms', `SELECT event_id::text FROM outbox WHERE ${BOOKED}`));
  expect(ids(await db.query('banking', 'SELECT event_id::text FROM settlement_events'))).toEqual(written);
  expect(ids(await db.query('accounts', 'SELECT event_id::text FROM settlement_events'))).toEqual(
    ids(await db.query('oms', "SELECT event_id::text FROM outbox WHERE type = 'trade.executed'")),
  );
}

/** The ledger balances (each entry, each account's sub-ledger, the whole), each of the `trades` fills is booked once, no cash book is below zero. */
async function expectLedgerBalanced(db: ServiceDatabases, trades: number): Promise<void> {
  expect(await db.query('banking', 'SELECT entry_id FROM postings GROUP BY entry_id, currency HAVING sum(amount) <> 0')).toEqual([]);
  expect(await db.query('banking', 'SELECT account_id FROM postings GROUP BY account_id, currency HAVING sum(amount) <> 0')).toEqual([]);
  expect(await db.query('banking', 'SELECT currency FROM postings GROUP BY currency HAVING sum(amount) <> 0')).toEqual([]);
  // The running totals the database keeps are exactly the postings' sums.
  expect(await db.query('banking', BOOK_BALANCE_DRIFT_SQL)).toEqual([]);
  // Each trade booked once in banking (a TRADE entry per trade).
  const [{ n: tradeEntries }] = await db.query(
    'banking',
    "SELECT count(*)::int AS n FROM journal_entries WHERE kind = 'TRADE' AND trade_id IS NOT NULL",
  );
  expect(tradeEntries).toBe(trades);
  expect(
    await db.query(
      'banking',
      "SELECT trade_id FROM journal_entries WHERE kind = 'TRADE' AND trade_id IS NOT NULL GROUP BY trade_id HAVING count(*) > 1",
    ),
  ).toEqual([]);
  // No cash book below zero.
  expect(await negativeCash(db)).toEqual([]);
}

/**
 * No hold left on a closed order, and a captured hold took exactly what the order's fills cost;
 * the only cash still held is for `unconfirmed` orders that are still ACCEPTED.
 */
async function expectHoldsSettled(db: ServiceDatabases, unconfirmed: Set<string>): Promise<void> {
  const orders = await db.query(
    'oms',
    'SELECT id, status, (gross_amount + commission)::text AS cost, filled_quantity::text AS filled FROM orders',
  );
  const holds = new Map(
    (
      await db.query(
        'banking',
        'SELECT order_id, state, amount::text, settled_amount::text AS settled, coalesce(captured_amount, 0)::text AS captured FROM holds',
      )
    ).map((h) => [h.order_id, h]),
  );
  let stillHeld = new Decimal(0);
  for (const o of orders) {
    const hold = holds.get(o.id);
    if (o.status === 'ACCEPTED' && unconfirmed.has(o.id)) {
      expect({ order: o.id, filled: new Decimal(o.filled).toString(), cost: new Decimal(o.cost).toString() }).toEqual({
        order: o.id,
        filled: '0',
        cost: '0',
      });
      if (hold)
        expect({ order: o.id, state: hold.state, settled: new Decimal(hold.settled).toString() }).toEqual({
          order: o.id,
          state: 'HELD',
          settled: '0',
        });
      if (hold) stillHeld = stillHeld.plus(hold.amount);
      continue;
    }
    expect({ order: o.id, open: ['NEW', 'PARTIALLY_FILLED', 'ACCEPTED', 'PENDING'].includes(o.status) }).toEqual({
      order: o.id,
      open: false,
    });
    if (hold)
      expect({ order: o.id, state: hold.state, captured: new Decimal(hold.captured).toFixed(2) }).toEqual({
        order: o.id,
        state: new Decimal(o.cost).isZero() ? 'RELEASED' : 'CAPTURED',
        captured: new Decimal(o.cost).toFixed(2),
      });
  }
  const [{ held }] = await db.query(
    'banking',
    "SELECT coalesce(sum(amount), 0)::text AS held FROM postings WHERE book = 'CUSTOMER_HELD' AND entry_id IN (SELECT id FROM journal_entries WHERE hold_order_id IS NOT NULL)",
  );
  expect(new Decimal(held).toFixed()).toBe(stillHeld.toFixed());
}

/** Every holding is its seed plus its fills, and none is short. */
async function expectHoldings(db: ServiceDatabases, seedPositions: NonNullable<InvariantOptions['seedPositions']>): Promise<void> {
  const fills = await db.query(
    'oms',
    "SELECT account_id, symbol, sum(CASE WHEN side = 'BUY' THEN quantity ELSE -quantity END)::text AS net FROM trades GROUP BY 1, 2",
  );
  for (const f of fills) {
    const seed = seedPositions.find((s) => s.accountId === f.account_id && s.symbol === f.symbol)?.quantity ?? '0';
    const [pos] = await db.query('accounts', 'SELECT quantity::text FROM positions WHERE account_id = $1 AND symbol = $2', [
      f.account_id,
      f.symbol,
    ]);
    expect({ holding: `${f.account_id}/${f.symbol}`, quantity: new Decimal(pos.quantity).toString() }).toEqual({
      holding: `${f.account_id}/${f.symbol}`,
      quantity: new Decimal(seed).plus(f.net).toString(),
    });
    // No shorts; a failure lists the holding's orders, so a randomised run that found a way says which.
    const short = new Decimal(pos.quantity).lt(0);
    const orders = short
      ? await db.query(
          'oms',
          `SELECT id, side, type, time_in_force, order_class, leg, parent_order_id, oco_group_id, replaces_order_id,
                  quantity::text, filled_quantity::text, status, status_reason FROM orders WHERE account_id = $1 AND symbol = $2 ORDER BY seq`,
          [f.account_id, f.symbol],
        )
      : [];
    expect({ holding: `${f.account_id}/${f.symbol}`, short, orders }).toEqual({
      holding: `${f.account_id}/${f.symbol}`,
      short: false,
      orders: [],
    });
  }
}

/**
 * Holdings below zero: from the OMS's own fills on top of the seed (at any moment), and in the
 * positions accounts keeps, with the account's type (once settled). This market has no short
 * selling on any account, cash or margin: both lists stay empty.
 */
export async function shortHoldings(
  db: ServiceDatabases,
  seedPositions: NonNullable<InvariantOptions['seedPositions']> = DEMO_POSITIONS,
): Promise<{ traded: unknown[]; booked: unknown[] }> {
  const traded = await db.query(
    'oms',
    `SELECT account_id, symbol, (coalesce(s.quantity, 0) + coalesce(t.net, 0))::text AS quantity
       FROM (SELECT account_id, symbol, sum(CASE WHEN side = 'BUY' THEN quantity ELSE -quantity END) AS net FROM trades GROUP BY 1, 2) t
       FULL JOIN unnest($1::uuid[], $2::text[], $3::numeric[]) AS s(account_id, symbol, quantity) USING (account_id, symbol)
      WHERE coalesce(s.quantity, 0) + coalesce(t.net, 0) < 0`,
    [seedPositions.map((s) => s.accountId), seedPositions.map((s) => s.symbol), seedPositions.map((s) => s.quantity)],
  );
  const booked = await db.query(
    'accounts',
    `SELECT a.type, p.account_id, p.symbol, p.quantity::text FROM positions p JOIN accounts a ON a.id = p.account_id WHERE p.quantity < 0`,
  );
  return { traded, booked };
}

/** Cash still held, per account and currency (the held book, and holds banking still keeps): none once no order is open. */
export async function cashHeld(db: ServiceDatabases): Promise<{ books: unknown[]; holds: unknown[] }> {
  const books = await db.query(
    'banking',
    "SELECT account_id, currency, sum(amount)::text AS held FROM postings WHERE book = 'CUSTOMER_HELD' GROUP BY 1, 2 HAVING sum(amount) <> 0",
  );
  const holds = await db.query('banking', "SELECT order_id, amount::text FROM holds WHERE state = 'HELD'");
  return { books, holds };
}

/**
 * The sell pairs' groups (an OCO's legs, a bracket's exits), found from the order each was
 * placed as (`orderId`, with the `quantity` it was placed for): every leg ever in the group,
 * replaced ones included, and what they filled together. `over` lists the groups whose legs
 * filled more than the group's quantity; `unknown` the groups with fills that none of `placed` leads to
 * (a pair refused on placing never worked).
 */
export async function pairFills(
  db: ServiceDatabases,
  placed: ReadonlyArray<{ orderId: string; quantity: string }>,
): Promise<{ groups: number; over: unknown[]; unknown: unknown[] }> {
  const rows: Array<{ root: string; group_id: string; quantity: string; filled: string; legs: number }> = await db.query(
    'oms',
    `SELECT g.root::text, grp.oco_group_id::text AS group_id, g.quantity::text, sum(l.filled_quantity)::text AS filled, count(*)::int AS legs
       FROM unnest($1::uuid[], $2::numeric[]) AS g(root, quantity)
       JOIN LATERAL (SELECT DISTINCT oco_group_id FROM orders
                      WHERE (id = g.root OR parent_order_id = g.root) AND oco_group_id IS NOT NULL) grp ON true
       JOIN orders l ON l.oco_group_id = grp.oco_group_id
      GROUP BY 1, 2, 3`,
    [placed.map((p) => p.orderId), placed.map((p) => p.quantity)],
  );
  const known = new Set(rows.map((r) => r.group_id));
  const all: Array<{ group_id: string }> = await db.query(
    'oms',
    'SELECT oco_group_id::text AS group_id FROM orders WHERE oco_group_id IS NOT NULL GROUP BY 1 HAVING sum(filled_quantity) > 0',
  );
  return {
    groups: rows.length,
    over: rows.filter((r) => new Decimal(r.filled).gt(r.quantity)),
    unknown: all.filter((g) => !known.has(g.group_id)),
  };
}

/**
 * Legs of a pair brought down by a partial fill of their sibling: legs whose quantity now is
 * below the quantity their first order event announced (nothing else lowers a working order's
 * quantity in place; a replacement is a new order).
 */
export async function reducedPairLegs(db: ServiceDatabases): Promise<number> {
  const [{ n }] = await db.query(
    'oms',
    `SELECT count(*)::int AS n FROM orders o
      WHERE o.oco_group_id IS NOT NULL AND o.quantity < (
        SELECT (e.payload->'order'->>'quantity')::numeric FROM outbox e
         WHERE e.type = 'order.updated' AND e.payload->'order'->>'id' = o.id::text ORDER BY e.seq LIMIT 1)`,
  );
  return n;
}
