/**
 * What the run asserts from the databases: migrations applied once, and the settlement
 * invariants as apps/platform's invariant test reads them (each event applied
 * exactly once by banking and accounts, the ledger balanced, holds settled, every holding the
 * sum of its fills). Each check answers the problems it found: none = passed.
 */
import Decimal from 'decimal.js';
import { Pool } from 'pg';
import { BOOK_BALANCE_DRIFT_SQL } from '@trading/banking-service';
import { DATABASES, dbName, type DatabaseServer } from './services';

type Db = 'auth' | 'accounts' | 'banking' | 'oms';

export class Databases {
  private readonly pools = {} as Record<Db, Pool>;

  constructor(pg: DatabaseServer) {
    for (const name of DATABASES) {
      const pool = new Pool({ connectionString: pg.url(dbName(name)), max: 2 });
      pool.on('error', () => undefined); // the server is crashed on purpose: the pool reconnects
      this.pools[name] = pool;
    }
  }

  async query(name: Db, sql: string, params: unknown[] = []): Promise<any[]> {
    return (await this.pools[name].query(sql, params)).rows;
  }

  async end(): Promise<void> {
    await Promise.all(Object.values(this.pools).map((p) => p.end()));
  }
}

/** Each database's migrations table lists each migration once, and at least one. */
export async function migratedOnce(db: Databases): Promise<{ problems: string[]; counts: Record<string, number> }> {
  const problems: string[] = [];
  const counts: Record<string, number> = {};
  for (const name of DATABASES) {
    const rows = await db.query(name, 'SELECT name, count(*)::int AS n FROM migrations GROUP BY name');
    counts[name] = rows.length;
    if (!rows.length) problems.push(`${name}: no migration recorded`);
    for (const r of rows) if (r.n !== 1) problems.push(`${name}: migration ${r.name} recorded ${r.n} times`);
  }
  return { problems, counts };
}

const BOOKED = "type IN ('trade.executed', 'order.closed')";

export interface Progress {
  unpublished: number;
  events: number;
  trades: number;
  banked: number;
  booked: number;
  open: number;
}

export async function progress(db: Databases): Promise<Progress> {
  const one = async (name: Db, sql: string) => (await db.query(name, sql))[0].n as number;
  return {
    unpublished: await one('oms', 'SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL'),
    events: await one('oms', `SELECT count(*)::int AS n FROM outbox WHERE ${BOOKED}`),
    trades: await one('oms', "SELECT count(*)::int AS n FROM outbox WHERE type = 'trade.executed'"),
    banked: await one('banking', 'SELECT count(*)::int AS n FROM settlement_events'),
    booked: await one('accounts', 'SELECT count(*)::int AS n FROM settlement_events'),
    open: await one('oms', "SELECT count(*)::int AS n FROM orders WHERE status IN ('NEW', 'PARTIALLY_FILLED', 'ACCEPTED')"),
  };
}

export const settledNow = (p: Progress) => p.unpublished === 0 && p.open === 0 && p.banked === p.events && p.booked === p.trades;

/** Every invariant, once settlement has caught up and no order works any more (nothing was seeded: holdings start at 0). */
export async function invariantProblems(db: Databases): Promise<string[]> {
  const problems: string[] = [];
  const p = await progress(db);
  if (!settledNow(p)) problems.push(`settlement not caught up: ${JSON.stringify(p)}`);
  problems.push(...(await appliedOnceProblems(db)));
  problems.push(...(await ledgerProblems(db, p)));
  problems.push(...(await holdProblems(db)));
  problems.push(...(await holdingProblems(db)));
  return problems;
}

/** `what`, with the first rows of `sql`'s answer, when it answers any. */
async function none(db: Databases, what: string, name: Db, sql: string): Promise<string[]> {
  const rows = await db.query(name, sql);
  return rows.length ? [`${what}: ${JSON.stringify(rows.slice(0, 3))}`] : [];
}

/** Each event applied exactly once: the same ids on both sides (settlement_events is keyed by event id). */
async function appliedOnceProblems(db: Databases): Promise<string[]> {
  const problems: string[] = [];
  const ids = async (name: Db, sql: string) => (await db.query(name, sql)).map((r) => r.event_id as string).sort();
  const written = await ids('oms', `SELECT event_id::text FROM outbox WHERE ${BOOKED}`);
  const fills = await ids('oms', "SELECT event_id::text FROM outbox WHERE type = 'trade.executed'");
  if (JSON.stringify(await ids('banking', 'SELECT event_id::text FROM settlement_events')) !== JSON.stringify(written))
    problems.push('banking applied a different set of events than the OMS wrote');
  if (JSON.stringify(await ids('accounts', 'SELECT event_id::text FROM settlement_events')) !== JSON.stringify(fills))
    problems.push('accounts applied a different set of fills than the OMS wrote');
  return problems;
}

/** The ledger balances (each entry, each account's sub-ledger, the whole), each trade is booked once, no cash book is below zero. */
async function ledgerProblems(db: Databases, p: Progress): Promise<string[]> {
  const problems = [
    ...(await none(
      db,
      'unbalanced entries',
      'banking',
      'SELECT entry_id FROM postings GROUP BY entry_id, currency HAVING sum(amount) <> 0',
    )),
    ...(await none(
      db,
      'unbalanced accounts',
      'banking',
      'SELECT account_id FROM postings GROUP BY account_id, currency HAVING sum(amount) <> 0',
    )),
    ...(await none(db, 'unbalanced ledger', 'banking', 'SELECT currency FROM postings GROUP BY currency HAVING sum(amount) <> 0')),
    ...(await none(db, 'running totals that differ from the postings', 'banking', BOOK_BALANCE_DRIFT_SQL)),
  ];
  // Each trade booked once.
  const [{ n: tradeEntries }] = await db.query(
    'banking',
    "SELECT count(*)::int AS n FROM journal_entries WHERE kind = 'TRADE' AND trade_id IS NOT NULL",
  );
  if (tradeEntries !== p.trades) problems.push(`${tradeEntries} TRADE entries for ${p.trades} fills`);
  problems.push(
    ...(await none(
      db,
      'trades booked twice',
      'banking',
      "SELECT trade_id FROM journal_entries WHERE kind = 'TRADE' AND trade_id IS NOT NULL GROUP BY trade_id HAVING count(*) > 1",
    )),
  );
  // No cash book below zero.
  problems.push(
    ...(await none(
      db,
      'negative cash',
      'banking',
      `SELECT account_id, currency, sum(amount) AS total FROM postings
      WHERE book IN ('CUSTOMER_CASH', 'CUSTOMER_UNSETTLED', 'CUSTOMER_HELD')
      GROUP BY account_id, currency, book = 'CUSTOMER_HELD' HAVING sum(amount) < 0`,
    )),
  );
  return problems;
}

/** No order still working, no hold left on a closed order; a captured hold took exactly what the order's fills cost. */
async function holdProblems(db: Databases): Promise<string[]> {
  const problems: string[] = [];
  const orders = await db.query('oms', 'SELECT id, status, (gross_amount + commission)::text AS cost FROM orders');
  const holds = new Map(
    (await db.query('banking', 'SELECT order_id, state, coalesce(captured_amount, 0)::text AS captured FROM holds')).map((h) => [
      h.order_id,
      h,
    ]),
  );
  for (const o of orders) {
    if (['NEW', 'PARTIALLY_FILLED', 'ACCEPTED'].includes(o.status)) problems.push(`order ${o.id} still ${o.status}`);
    const hold = holds.get(o.id);
    if (!hold) continue;
    const cost = new Decimal(o.cost);
    const want = cost.isZero() ? 'RELEASED' : 'CAPTURED';
    if (hold.state !== want || !new Decimal(hold.captured).eq(cost))
      problems.push(`order ${o.id} (${o.status}, cost ${cost}) has hold ${hold.state} captured ${hold.captured}`);
  }
  const [{ held }] = await db.query(
    'banking',
    "SELECT coalesce(sum(amount), 0)::text AS held FROM postings WHERE book = 'CUSTOMER_HELD' AND entry_id IN (SELECT id FROM journal_entries WHERE hold_order_id IS NOT NULL)",
  );
  if (!new Decimal(held).isZero()) problems.push(`cash still held for orders: ${held}`);
  return problems;
}

/** Every holding is the sum of its fills (the accounts started empty), none short. */
async function holdingProblems(db: Databases): Promise<string[]> {
  const problems: string[] = [];
  const net = await db.query(
    'oms',
    "SELECT account_id, symbol, sum(CASE WHEN side = 'BUY' THEN quantity ELSE -quantity END)::text AS net FROM trades GROUP BY 1, 2",
  );
  for (const f of net) {
    const [pos] = await db.query('accounts', 'SELECT quantity::text FROM positions WHERE account_id = $1 AND symbol = $2', [
      f.account_id,
      f.symbol,
    ]);
    if (!pos || !new Decimal(pos.quantity).eq(f.net))
      problems.push(`holding ${f.account_id}/${f.symbol} is ${pos?.quantity ?? 'missing'}, its fills sum to ${f.net}`);
  }
  return problems;
}
