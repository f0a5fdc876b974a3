import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { withDatabaseName } from '@trading/db';
import { http, TEST_POSTGRES_URL } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { fund, startOrdersPlatform, until } from '../support/orders-platform';
import { patSession } from '../support/sessions';
import type { TestPlatform } from '../support/test-platform';

const [alice, bob] = DEMO_USERS as [(typeof DEMO_USERS)[0], (typeof DEMO_USERS)[0]];
const aliceCash = DEMO_ACCOUNTS[0]!.id;

/** The production feed's pace (OMS_PRICE_TICK_MS 1000: one tick per instrument per second) over the retention (7 days). */
const TICKS = 7 * 86_400;
const MINUTE = 60_000;
const BARS = 'nodes { start open high low close volume trades }';
/** The largest page of bars one call may ask for. */
const PAGE = 10_000;
/**
 * The lock tests' statement timeout (DB_STATEMENT_TIMEOUT_MS): below the lock wait (5 s), so a read
 * held by an operator's lock is cancelled by the timeout, not the lock wait. They run on a platform
 * of their own: the attack's runs at the production settings, where a statement limit well under
 * the default would also cut short an order's statements on a machine the attack saturates.
 */
const STATEMENT_TIMEOUT_MS = 3_000;

/**
 * Rows PostgreSQL has read of a table of the OMS's so far: sequential reads and index entries read
 * (index-only scans included). An idle backend reports its counts within 10 s (PostgreSQL's idle
 * interval for statistics), so this waits that long first.
 */
const rowsRead = async (db: Client, table: string): Promise<number> => {
  await new Promise((r) => setTimeout(r, 11_000));
  await db.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await db.query(
    `SELECT coalesce(t.seq_tup_read, 0) + coalesce((SELECT sum(i.idx_tup_read) FROM pg_stat_user_indexes i WHERE i.relid = t.relid), 0) AS n
     FROM pg_stat_user_tables t WHERE t.relname = $1`,
    [table],
  );
  return Number(rows[0].n);
};

/** A platform whose OMS holds `ticks` of AAPL's ticks, one a second up to now; a reader (bob) and a funded trader (alice). */
const startWithTicks = async (env: Record<string, string>, ticks: number) => {
  const p = await startOrdersPlatform(env);
  const reader = await patSession(p, bob.email, 'READ_ONLY');
  const trader = await patSession(p, alice.email, 'READ_WRITE');
  await p.oms.feed.setPrice('AAPL', '190.00');
  await fund(p, trader, aliceCash, '100000');
  // Written straight into the OMS's database; its trigger keeps the bars as they arrive.
  const oms = new Client({ connectionString: withDatabaseName(TEST_POSTGRES_URL, `${p.config.PLATFORM_DB_PREFIX}oms`) });
  await oms.connect();
  const since = Date.now() - ticks * 1000;
  await oms.query(
    `INSERT INTO market_ticks (symbol, price, volume, at)
     SELECT 'AAPL', 150 + (n::bigint * 7919 % 8000) / 100.0, 100 * (1 + n % 7), $1::timestamptz + n * INTERVAL '1 second'
     FROM generate_series(0, $2 - 1) AS n`,
    [new Date(since).toISOString(), ticks],
  );
  await oms.query('ANALYZE market_ticks');
  return { p, oms, reader, trader, first: Math.ceil(since / MINUTE) * MINUTE };
};

/**
 * Alice's limit order far below the market: it rests, holding cash in banking. Sent as a client
 * should: with an Idempotency-Key, and again with the same key (at most twice more) when the
 * answer is 503, which promises nothing was changed. On a machine the attack saturates, a hop of
 * the order's path (the OMS's call to banking for the hold) can pass its 5 s timeout.
 */
const placeRestingOrder = async (p: TestPlatform, trader: string) => {
  const key = randomUUID();
  for (let attempt = 1; ; attempt++) {
    const res = await http('POST', `${p.urls.api}/oms/order`, {
      token: trader,
      headers: { 'Idempotency-Key': key },
      body: { accountId: aliceCash, symbol: 'AAPL', side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', quantity: '1', limitPrice: '100.00' },
    });
    if (res.status !== 503 || attempt === 3) return res;
    await new Promise((r) => setTimeout(r, 500));
  }
};

/** Orders the OMS holds (only the trader places any). */
const ordersHeld = async (db: Client) => Number((await db.query('SELECT count(*)::int AS n FROM orders')).rows[0].n);

/**
 * Bars over a week of ticks: each page of bars was aggregated from the ticks per request (a
 * third of a second of database time), and ten aliased pages in one GraphQL operation cost one
 * request's budget and two seconds, so one user's operations, four at a time, stalled everyone's
 * quotes and orders for seconds. Bars are now kept as ticks arrive and a page reads its own rows;
 * an operation is priced by the bars it asks for (a page may hold 10,000), and refused over the
 * budget before it runs. Run at the production settings.
 */
describe('market bars under abuse', () => {
  let p: TestPlatform;
  let oms: Client;
  let reader: string;
  let trader: string;
  /** The first whole minute of the week of ticks. */
  let first: number;

  beforeAll(async () => {
    ({ p, oms, reader, trader, first } = await startWithTicks({}, TICKS));
    // The trader's first calls warm the paths they take (connections, caches, compiled code): not what is measured.
    await underAttack([]);
  }, 300_000);
  afterAll(async () => {
    await oms?.end();
    await p?.stop();
  });

  /** Aliased full pages of AAPL, each from its own start. */
  const pages = (starts: number[]) =>
    `{ ${starts
      .map(
        (s, j) => `p${j}: marketBars(symbol: "AAPL", timeframe: "1Min", limit: ${PAGE}, start: "${new Date(s).toISOString()}") { ${BARS} }`,
      )
      .join(' ')} }`;
  const graphql = (query: string) => http('POST', p.urls.gateway, { token: reader, body: { query } });
  /** `count` operations of `size` pages each, from starts early enough in the week for a full page each, no two pages alike. */
  const spread = (count: number, size: number, salt: number) =>
    Array.from({ length: count }, (_, i) =>
      Array.from({ length: size }, (_, j) => first + (((i * size + j) * 1789 + salt) % (TICKS / 60 - PAGE - 2)) * MINUTE),
    );

  /**
   * Runs `operations` from the reader, 4 at a time, while the trader reads quotes and places
   * orders (each of which must succeed); returns the answers and the rows the database read of
   * the ticks and of the bars meanwhile.
   */
  const underAttack = async (operations: number[][]) => {
    const [ticks, bars] = await Promise.all([rowsRead(oms, 'market_ticks'), rowsRead(oms, 'market_bars')]);
    let attacking = true;
    const answers: Array<{ starts: number[]; status: number; body: any }> = [];
    const attack = (async () => {
      const queue = [...operations];
      const worker = async () => {
        for (let next = queue.shift(); next; next = queue.shift()) {
          const res = await graphql(pages(next));
          answers.push({ starts: next, status: res.status, body: res.body });
        }
      };
      await Promise.all([worker(), worker(), worker(), worker()]);
      attacking = false;
    })();
    let orders = 0;
    const working = await ordersHeld(oms);
    // The code and message come along, so that a refusal says which service refused and why.
    const answered = async (call: () => Promise<{ status: number; body: any }>, expected: number) => {
      const res = await call();
      expect({ status: res.status, error: res.body?.code, detail: res.body?.detail }).toEqual({
        status: expected,
        error: undefined,
        detail: undefined,
      });
    };
    // At least a few of each, however quickly the operations are answered.
    while ((attacking || orders < 5) && orders < 60) {
      await answered(() => http('GET', `${p.urls.api}/market/quotes?symbols=AAPL`, { token: trader }), 200);
      orders++;
      await answered(() => placeRestingOrder(p, trader), 201);
    }
    await attack;
    // Every order placed once: a retried one was not placed twice.
    expect(await ordersHeld(oms)).toBe(working + orders);
    return {
      answers,
      ticksRead: (await rowsRead(oms, 'market_ticks')) - ticks,
      barsRead: (await rowsRead(oms, 'market_bars')) - bars,
    };
  };

  /** Each page answered is exactly the aggregation of its ticks. */
  const expectExactBars = async (answers: Array<{ starts: number[]; body: any }>) => {
    for (const { starts, body } of answers) {
      for (const [j, start] of starts.entries()) {
        const { rows } = await oms.query(
          `SELECT date_bin('1 minute', at, TIMESTAMPTZ '2000-01-01T00:00:00Z') AS start,
             (array_agg(price ORDER BY at, id))[1] AS open, max(price) AS high, min(price) AS low,
             (array_agg(price ORDER BY at DESC, id DESC))[1] AS close, sum(volume) AS volume, count(*)::int AS trades
           FROM market_ticks WHERE symbol = 'AAPL' AND at >= $1 GROUP BY 1 ORDER BY 1 LIMIT $2`,
          [new Date(start).toISOString(), PAGE],
        );
        const got = body.data[`p${j}`].nodes;
        const mismatch = got.findIndex(
          (bar: Record<string, string | number>, k: number) =>
            bar['start'] !== rows[k].start.toISOString() ||
            bar['trades'] !== rows[k].trades ||
            !['open', 'high', 'low', 'close', 'volume'].every((f) => new Decimal(bar[f]!).eq(rows[k][f])),
        );
        expect({ start: new Date(start).toISOString(), bars: got.length, mismatch }).toEqual({
          start: new Date(start).toISOString(),
          bars: PAGE,
          mismatch: -1,
        });
      }
    }
  };

  it("24 operations of three aliased 10,000-bar pages, 4 at a time, are refused before they run (cost): no bar or tick is read; another user's quotes and orders go on", async () => {
    const operations = spread(24, 3, 0);
    const { answers, ticksRead, barsRead } = await underAttack(operations);
    expect(answers.map((a) => [a.status, a.body.errors?.[0]?.extensions?.code])).toEqual(
      operations.map(() => [400, 'GRAPHQL_VALIDATION_FAILED']),
    );
    expect(answers[0]!.body.errors[0].message).toMatch(/^Syntax Error: Query Cost limit of 5000 exceeded/);
    expect({ ticksRead, barsRead }).toEqual({ ticksRead: 0, barsRead: 0 });
  }, 120_000);

  it("8 operations of the most the budget allows (two 10,000-bar pages over a week of ticks), 4 at a time, are exact and read only their own bars, never the ticks; another user's quotes and orders go on", async () => {
    const { answers, ticksRead, barsRead } = await underAttack(spread(8, 2, 7));
    expect(answers.map((a) => [a.status, a.body.errors])).toEqual(answers.map(() => [200, undefined]));
    // Each page reads at most its limit and one more (whether there is a next page): 16 pages of 10,000.
    expect(ticksRead).toBe(0);
    expect(barsRead).toBeGreaterThanOrEqual(16 * PAGE);
    expect(barsRead).toBeLessThanOrEqual(16 * (PAGE + 1));
    await expectExactBars(answers);
  }, 300_000);
});

/**
 * An instance reads only a few pages of bars at once (OMS_BAR_READS), the rest waiting their turn
 * rather than taking the pool from orders, and no statement runs longer than the service's
 * statement timeout. An operator's lock on the bars stands in for a slow read.
 */
describe('market bars held by a lock', () => {
  let p: TestPlatform;
  let oms: Client;
  let reader: string;
  let trader: string;

  beforeAll(async () => {
    // An hour of ticks: sixty bars.
    ({ p, oms, reader, trader } = await startWithTicks({ DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS) }, 3_600));
  }, 300_000);
  afterAll(async () => {
    await oms?.end();
    await p?.stop();
  });

  it('however many pages of bars are asked at once, an instance reads two at a time (OMS_BAR_READS): the rest wait outside the database, and an order placed meanwhile goes through', async () => {
    // An operator's lock holds every read of the bars where it is: what waits on it in the
    // database is exactly what the OMS let through to read.
    const operator = new Client({ connectionString: withDatabaseName(TEST_POSTGRES_URL, `${p.config.PLATFORM_DB_PREFIX}oms`) });
    await operator.connect();
    // Counted from another session: a transaction sees the activity views as they were at its first look.
    const readingBars = async () =>
      Number(
        (
          await oms.query(
            `SELECT count(*) AS n FROM pg_stat_activity
              WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND query LIKE 'SELECT bucket, %'`,
          )
        ).rows[0].n,
      );
    let pages: Promise<{ status: number }>[] = [];
    try {
      await operator.query('BEGIN');
      await operator.query('LOCK TABLE market_bars IN ACCESS EXCLUSIVE MODE');
      pages = Array.from({ length: 10 }, () => http('GET', `${p.urls.api}/market/bars/AAPL?timeframe=1Min&limit=5`, { token: reader }));
      // The first pages reach the lock; however long the others have had to follow, no more than two are reading.
      const samples = [await until(readingBars, (n) => n >= 2, 'two pages reading')];
      for (let i = 0; i < 3; i++) {
        await new Promise((r) => setTimeout(r, 100));
        samples.push(await readingBars());
      }
      expect(Math.max(...samples)).toBe(2);
      // The pool is not theirs: another user's order is placed while they wait.
      const order = await placeRestingOrder(p, trader);
      expect({ status: order.status, error: order.body.code }).toEqual({ status: 201, error: undefined });
    } finally {
      await operator.query('ROLLBACK');
      await operator.end();
    }
    // Every page is answered in its turn: read, or (one that waited past the statement timeout) 503, never a 500.
    const statuses = (await Promise.all(pages)).map((r) => r.status);
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
  });

  it('a statement that runs past the statement timeout is cancelled, and the caller gets 503 SERVICE_UNAVAILABLE, not a 500', async () => {
    // An operator's long transaction holds the bars: the read waits, and the timeout ends the wait before the lock timeout would.
    const operator = new Client({ connectionString: withDatabaseName(TEST_POSTGRES_URL, `${p.config.PLATFORM_DB_PREFIX}oms`) });
    await operator.connect();
    try {
      await operator.query('BEGIN');
      await operator.query('LOCK TABLE market_bars IN ACCESS EXCLUSIVE MODE');
      const began = Date.now();
      const res = await http('GET', `${p.urls.api}/market/bars/AAPL?timeframe=1Min&limit=5`, { token: reader });
      const waited = Date.now() - began;
      expect({ status: res.status, code: res.body.code }).toEqual({ status: 503, code: 'SERVICE_UNAVAILABLE' });
      expect(waited).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS - 100);
      expect(waited).toBeLessThan(4_500);
      await operator.query('ROLLBACK');
      const after = await http('GET', `${p.urls.api}/market/bars/AAPL?timeframe=1Min&limit=5`, { token: reader });
      expect([after.status, after.body.bars.length]).toEqual([200, 5]);
    } finally {
      await operator.end();
    }
  });
});
