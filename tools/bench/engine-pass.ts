/**
 * What one pass of the execution engine costs PostgreSQL, against a book of resting orders that
 * grows (1,000, 10,000, 50,000 limits away from the price), two ways in one process on the same
 * server: as the engine read before migration 070 (every working order read and tested, each
 * statement planned on every pass) and as it reads now (`ENGINE_READS`: ranges of the partial
 * indexes, prepared statements). Each way has its own database with the same book, opened as the
 * OMS opens it (one pooled session, the same session settings). Prints the backend's CPU per
 * pass (from /proc, so PostgreSQL must run on this machine) and the wall time, and what that is
 * per OMS instance at the default 5 passes a second.
 *
 *   npx tsx tools/bench/engine-pass.ts   (TEST_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/test)
 */
import { queryPrepared, type DataSource } from '@trading/db';
import { ENGINE_READS, OPEN_ORDER_CAP_SETTING, omsMigrations, TRAIL } from '@trading/oms-service';
import { createTestDatabases } from '@trading/testing';
import { openOneSession } from './one-session';
import { CLOCK_TICKS, readCpuTicks } from './proc';

const BOOKS = [1_000, 10_000, 50_000];
const PASSES = 100;
const PASSES_PER_SECOND = 5; // OMS_ENGINE_INTERVAL_MS's default of 200 ms

/** The engine's candidate read as it was before migration 070 (commit 1358577): every working order, tested. */
const WORTH_A_LOOK_BEFORE = `
  SELECT o.id, o.symbol, o.side, o.account_id, (o.quantity - o.filled_quantity)::text AS remaining,
         (o.type IN ('MARKET', 'LIMIT') OR o.triggered_at IS NOT NULL OR CASE o.side WHEN 'BUY' THEN i.last_price >= o.stop_price ELSE i.last_price <= o.stop_price END) AND (o.limit_price IS NULL OR CASE o.side WHEN 'BUY' THEN i.last_price <= o.limit_price ELSE i.last_price >= o.limit_price END)
        AND (o.side = 'SELL' OR o.collar_price IS NULL OR i.last_price <= o.collar_price) AS can_trade,
         o.time_in_force IN ('IOC', 'FOK') OR (o.type IN ('STOP', 'STOP_LIMIT', 'TRAILING_STOP') AND o.triggered_at IS NULL) AS must_look,
         row_number() OVER (PARTITION BY o.symbol, o.side, o.account_id ORDER BY (o.limit_price IS NULL) DESC, CASE o.side WHEN 'BUY' THEN -o.limit_price ELSE o.limit_price END, o.seq) AS turn
  FROM orders o JOIN instruments i ON i.symbol = o.symbol
  WHERE o.status IN ('NEW', 'PARTIALLY_FILLED') AND o.replaced_by_order_id IS NULL AND i.tradable AND (
    o.time_in_force IN ('IOC', 'FOK')
    OR (o.type IN ('STOP', 'STOP_LIMIT', 'TRAILING_STOP') AND o.triggered_at IS NULL AND CASE o.side WHEN 'BUY' THEN i.last_price >= o.stop_price ELSE i.last_price <= o.stop_price END)
    OR ((o.type IN ('MARKET', 'LIMIT') OR o.triggered_at IS NOT NULL) AND (o.limit_price IS NULL OR CASE o.side WHEN 'BUY' THEN i.last_price <= o.limit_price ELSE i.last_price >= o.limit_price END)
        AND (o.side = 'SELL' OR o.collar_price IS NULL OR i.last_price <= o.collar_price)))
  ORDER BY turn, o.symbol, (o.limit_price IS NULL) DESC, CASE o.side WHEN 'BUY' THEN -o.limit_price ELSE o.limit_price END, o.seq
  LIMIT 2000`;

type Way = 'before' | 'now';

/** One pass's reads, in the engine's order: quotes, trailing stops, candidates, expiries, unconfirmed placements. */
const PASS: Record<Way, Array<{ text: string; values: unknown[]; name?: string }>> = {
  // As the engine sent them: TypeORM's query(), planned every time.
  before: [
    { text: 'SELECT symbol, last_price, lot_size FROM instruments', values: [] },
    { text: TRAIL.text, values: [] },
    { text: WORTH_A_LOOK_BEFORE, values: [] },
    {
      text: "SELECT id FROM orders WHERE status IN ('NEW', 'PARTIALLY_FILLED') AND replaced_by_order_id IS NULL AND expires_at <= now() ORDER BY seq LIMIT 500",
      values: [],
    },
    { text: ENGINE_READS.UNCONFIRMED_REPLACEMENTS.text, values: [60] },
    { text: ENGINE_READS.UNCONFIRMED_PLACEMENTS.text, values: [60] },
  ],
  now: [
    { name: 'quotes', text: 'SELECT symbol, last_price, lot_size FROM instruments', values: [] },
    { ...TRAIL, values: [] },
    { ...ENGINE_READS.WORTH_A_LOOK, values: ['0.001'] },
    { ...ENGINE_READS.EXPIRED, values: [] },
    { ...ENGINE_READS.UNCONFIRMED_REPLACEMENTS, values: [60] },
    { ...ENGINE_READS.UNCONFIRMED_PLACEMENTS, values: [60] },
  ],
};

/** Resting orders up to `size` (limit buys at 60 and sells at 140 around a price of 100, every seventh a DAY order), plus as much history. */
async function growBook(db: DataSource, size: number): Promise<void> {
  const [{ n }]: Array<{ n: number }> = await db.query("SELECT count(*)::int AS n FROM orders WHERE status = 'NEW'");
  if (n >= size) return;
  await db.query(
    `INSERT INTO orders (account_id, client_order_id, symbol, side, type, time_in_force, quantity, limit_price, status, user_id, currency,
                         hold_amount, submitted_at, expires_at)
     SELECT ('00000000-0000-4000-8000-' || lpad((g % 500)::text, 12, '0'))::uuid, 'rest-' || g, 'S' || (g % 20), CASE g % 2 WHEN 0 THEN 'BUY' ELSE 'SELL' END,
            'LIMIT', CASE WHEN g % 7 = 0 THEN 'DAY' ELSE 'GTC' END, 1, CASE g % 2 WHEN 0 THEN 60 ELSE 140 END, 'NEW', 'u', 'USD', 60, now(),
            CASE WHEN g % 7 = 0 THEN now() + interval '6 hours' END
     FROM generate_series($1::int + 1, $2::int) g`,
    [n, size],
  );
  await db.query(
    `INSERT INTO orders (account_id, client_order_id, symbol, side, type, time_in_force, quantity, status, user_id, currency, hold_amount,
                         submitted_at, filled_quantity, filled_at)
     SELECT ('00000000-0000-4000-8000-' || lpad((g % 500)::text, 12, '0'))::uuid, 'done-' || g, 'S' || (g % 20), 'BUY', 'MARKET', 'DAY', 1,
            'FILLED', 'u', 'USD', 100, now(), 1, now()
     FROM generate_series($1::int + 1, $2::int) g`,
    [n, size],
  );
  await db.query('VACUUM ANALYZE orders');
}

/** PASSES passes on the database's one session: its backend's CPU and the wall time, in ms per pass. */
async function passes(db: DataSource, backend: number, way: Way): Promise<{ cpuMs: number; wallMs: number }> {
  const cpuBefore = readCpuTicks(backend);
  const started = process.hrtime.bigint();
  for (let i = 0; i < PASSES; i++)
    for (const statement of PASS[way])
      if (statement.name) await queryPrepared(db, { name: statement.name, text: statement.text }, statement.values);
      else await db.query(statement.text, statement.values);
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6 / PASSES;
  const cpuMs = (((readCpuTicks(backend) - cpuBefore) / CLOCK_TICKS) * 1000) / PASSES;
  return { cpuMs, wallMs };
}

async function main(): Promise<void> {
  const dbs = await createTestDatabases(['engine_before', 'engine_now']);
  const clients: Partial<Record<Way, { client: DataSource; backend: number }>> = {};
  try {
    for (const [way, migrations] of [
      // Without migration 070's indexes (later migrations stay: the comparison is the engine's reads).
      ['before', omsMigrations.filter((m) => m.name !== 'EngineIndexes1732230000070')],
      ['now', omsMigrations],
    ] as const) {
      const url = way === 'before' ? dbs.urls.engine_before : dbs.urls.engine_now;
      const { db: client, backend } = await openOneSession(url, [...migrations], { [OPEN_ORDER_CAP_SETTING]: '1000000000' });
      await client.query(
        `INSERT INTO instruments (symbol, name, currency, tick_size, lot_size, last_price, previous_close)
         SELECT 'S' || g, 'Stock ' || g, 'USD', 0.01, 1, 100, 100 FROM generate_series(0, 19) g`,
      );
      clients[way] = { client, backend };
    }
    console.log(`The engine's reads per pass, ${PASSES} passes each way, alternated; 20 instruments, nothing marketable.\n`);
    console.log(
      '| Resting orders | before: PostgreSQL CPU per pass | now | ratio | before: wall per pass | now | before: a core per OMS instance at 5 passes/s | now |',
    );
    console.log('|--:|--:|--:|--:|--:|--:|--:|--:|');
    for (const size of BOOKS) {
      for (const way of ['before', 'now'] as const) await growBook(clients[way]!.client, size);
      const sum = { before: { cpuMs: 0, wallMs: 0 }, now: { cpuMs: 0, wallMs: 0 } };
      // Warm both (the prepared statements' first plans, the caches), then two rounds alternated.
      for (const way of ['before', 'now'] as const) await passes(clients[way]!.client, clients[way]!.backend, way);
      for (const order of [
        ['before', 'now'],
        ['now', 'before'],
      ] as const)
        for (const way of order) {
          const figures = await passes(clients[way]!.client, clients[way]!.backend, way);
          sum[way].cpuMs += figures.cpuMs / 2;
          sum[way].wallMs += figures.wallMs / 2;
        }
      const share = (ms: number) => `${((ms * PASSES_PER_SECOND) / 10).toFixed(1)}%`;
      console.log(
        `| ${size.toLocaleString('en-US')} | ${sum.before.cpuMs.toFixed(2)} ms | ${sum.now.cpuMs.toFixed(2)} ms | ` +
          `${(sum.before.cpuMs / Math.max(sum.now.cpuMs, 0.01)).toFixed(1)}× | ${sum.before.wallMs.toFixed(2)} ms | ${sum.now.wallMs.toFixed(2)} ms | ` +
          `${share(sum.before.cpuMs)} | ${share(sum.now.cpuMs)} |`,
      );
    }
  } finally {
    for (const c of Object.values(clients)) await c?.client.destroy();
    await dbs.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
