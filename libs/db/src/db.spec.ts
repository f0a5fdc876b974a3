import { Client } from 'pg';
import { isTransientFailure } from '@trading/errors';
import {
  databaseNameOf,
  dropDatabase,
  ensureDatabase,
  IdempotencyKeys,
  openDatabase,
  queryPrepared,
  requestHash,
  withDatabaseName,
  type DataSource,
} from './index';

class CreateThings1700000000000 {
  name = 'CreateThings1700000000000';
  async up(q: { query(sql: string): Promise<unknown> }) {
    await q.query('CREATE TABLE things (id int PRIMARY KEY)');
  }
  async down(q: { query(sql: string): Promise<unknown> }) {
    await q.query('DROP TABLE things');
  }
}

/** Like migration 070 of the OMS: an index built CONCURRENTLY, outside a transaction, after a slow step. */
class SlowThenConcurrentIndex1700000000001 {
  name = 'SlowThenConcurrentIndex1700000000001';
  transaction = false;
  async up(q: { query(sql: string): Promise<unknown> }) {
    await q.query('CREATE TABLE IF NOT EXISTS slow_things (id int PRIMARY KEY, n int)');
    await q.query('SELECT pg_sleep(1.5)'); // the other instances are waiting for the migration lock by now
    await q.query('CREATE INDEX CONCURRENTLY IF NOT EXISTS slow_things_n_idx ON slow_things (n)');
  }
  async down(q: { query(sql: string): Promise<unknown> }) {
    await q.query('DROP TABLE slow_things');
  }
}

/** A migration that takes longer than the sessions' statement timeout (building a table from a big one). */
class SlowBackfill1700000000002 {
  name = 'SlowBackfill1700000000002';
  async up(q: { query(sql: string): Promise<unknown> }) {
    await q.query('SELECT pg_sleep(0.8)');
  }
  async down(q: { query(sql: string): Promise<unknown> }) {
    await q.query('SELECT 1');
  }
}

// Not @trading/testing: it is built on this lib, and a spec importing it would make a cycle.
const TEST_POSTGRES_URL = process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

describe('database helpers', () => {
  const url = withDatabaseName(TEST_POSTGRES_URL, `t_${process.pid}_${Date.now().toString(36)}_db`);
  afterAll(() => dropDatabase(url));

  it('creates a database once, even when asked twice at the same time', async () => {
    await Promise.all([ensureDatabase(url), ensureDatabase(url)]);
    const client = new Client({ connectionString: url });
    await client.connect();
    await client.end();
    expect(databaseNameOf(url)).toMatch(/^t_.*_db$/);
  });

  it('refuses unsafe database names', async () => {
    await expect(ensureDatabase(withDatabaseName(TEST_POSTGRES_URL, 'x"; DROP'))).rejects.toThrow(/unsafe/);
  });

  it('migrates once when several instances open the same database together', async () => {
    const sources = await Promise.all([1, 2, 3].map(() => openDatabase({ url, entities: [], migrations: [CreateThings1700000000000] })));
    const [{ count }] = await sources[0]!.query('SELECT count(*)::int AS count FROM migrations');
    expect(count).toBe(1);
    for (const s of sources) await s.destroy();
  });

  it('migrates CONCURRENTLY while other instances wait for the migration lock (a waiter holding a snapshot made the build time out)', async () => {
    const concurrent = withDatabaseName(TEST_POSTGRES_URL, `t_${process.pid}_${Date.now().toString(36)}_cic`);
    await ensureDatabase(concurrent);
    const sources: DataSource[] = [];
    try {
      // A build CONCURRENTLY waits for every statement of its database older than it; a short lock
      // timeout turns a wait on the instances queued for the lock into a failure at once.
      const opened = await Promise.allSettled(
        [1, 2].map(() =>
          openDatabase({
            url: concurrent,
            entities: [],
            migrations: [SlowThenConcurrentIndex1700000000001],
            limits: { lockTimeoutMs: 1000 },
          }),
        ),
      );
      for (const o of opened) if (o.status === 'fulfilled') sources.push(o.value);
      for (const o of opened) if (o.status === 'rejected') throw o.reason;
      const [index] = await sources[0]!.query(
        "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'slow_things_n_idx'",
      );
      expect(index).toEqual({ indisvalid: true });
    } finally {
      // Closed first, whatever happened: an open pool would make the drop fail and hide the cause.
      for (const s of sources) await s.destroy();
      await dropDatabase(concurrent);
    }
  });
});

describe('IdempotencyKeys', () => {
  const table = `t_${process.pid}_${Date.now().toString(36)}_idempotency_keys`;
  const keys = new IdempotencyKeys<{ n: number }>(table, 'response');
  let db: DataSource;

  beforeAll(async () => {
    db = await openDatabase({ url: TEST_POSTGRES_URL, entities: [], migrations: [] });
    await db.query(
      `CREATE TABLE ${table} (user_id text, key text, request_hash text NOT NULL, response jsonb, created_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (user_id, key))`,
    );
  });
  afterAll(async () => {
    await db?.query(`DROP TABLE IF EXISTS ${table}`);
    await db?.destroy();
  });

  it('hashes requests canonically, answers a repeat with the first result, refuses another request with the key, and frees it after its lifetime', async () => {
    expect(requestHash('deposit', { a: 1, b: { c: 2, d: 3 } })).toBe(requestHash('deposit', { b: { d: 3, c: 2 }, a: 1 }));
    expect(requestHash('deposit', { a: 1 })).not.toBe(requestHash('withdraw', { a: 1 }));
    const hash = requestHash('op', { amount: '10' });
    await db.transaction(async (tx) => {
      expect(await keys.claim(tx, 'alice|pat:1', 'k1', hash)).toEqual({ first: true });
      await keys.remember(tx, 'alice|pat:1', 'k1', { n: 1 });
    });
    expect(await db.transaction((tx) => keys.claim(tx, 'alice|pat:1', 'k1', hash))).toEqual({ first: false, result: { n: 1 } });
    expect(await keys.earlier(db, 'alice|pat:1', 'k1', hash)).toEqual({ n: 1 });
    // Another owner's key of the same name is theirs alone.
    expect(await db.transaction((tx) => keys.claim(tx, 'alice|app:x', 'k1', hash))).toEqual({ first: true });
    await expect(db.transaction((tx) => keys.claim(tx, 'alice|pat:1', 'k1', requestHash('op', { amount: '11' })))).rejects.toMatchObject({
      code: 'UNPROCESSABLE',
      field: 'idempotencyKey',
    });
    await db.query(`UPDATE ${table} SET created_at = now() - interval '25 hours' WHERE key = 'k1'`);
    expect(await keys.earlier(db, 'alice|pat:1', 'k1', hash)).toBeUndefined();
    expect(await db.transaction((tx) => keys.claim(tx, 'alice|pat:1', 'k1', requestHash('op', { amount: '11' })))).toEqual({ first: true });
    await keys.purgeExpired(db);
    expect((await db.query(`SELECT key FROM ${table}`)).length).toBe(1);
  });
});

describe('queryPrepared', () => {
  let db: DataSource;
  beforeAll(async () => {
    db = await openDatabase({ url: TEST_POSTGRES_URL, entities: [], migrations: [], poolSize: 1 });
  });
  afterAll(() => db?.destroy());

  it('runs a named statement on the DataSource pool, planned once per connection and reused with new values', async () => {
    const statement = { name: `spec-echo-${process.pid}`, text: 'SELECT $1::int + 1 AS n, $2::text AS label' };
    expect(await queryPrepared(db, statement, [1, 'a'])).toEqual([{ n: 2, label: 'a' }]);
    expect(await queryPrepared(db, statement, [41, 'b'])).toEqual([{ n: 42, label: 'b' }]);
    // One connection in the pool: the statement the first call prepared is the one PostgreSQL holds for it.
    const prepared: Array<{ name: string }> = await db.query('SELECT name FROM pg_prepared_statements');
    expect(prepared.map((p) => p.name)).toContain(statement.name);
  });

  it("runs every session without PostgreSQL's JIT (on by default: it compiled a millisecond read for 180 ms)", async () => {
    expect(await db.query('SHOW jit')).toEqual([{ jit: 'off' }]);
  });
});

describe('session limits: nothing waits on the database for ever', () => {
  const url = withDatabaseName(TEST_POSTGRES_URL, `t_${process.pid}_${Date.now().toString(36)}_limits`);
  const limits = { lockTimeoutMs: 300, idleInTransactionMs: 1_000, acquireTimeoutMs: 500, statementTimeoutMs: 400 };
  let db: DataSource;
  let operator: Client;
  beforeAll(async () => {
    await ensureDatabase(url);
    db = await openDatabase({ url, entities: [], migrations: [CreateThings1700000000000, SlowBackfill1700000000002], poolSize: 2, limits });
    await db.query('INSERT INTO things (id) VALUES (1), (2)');
    operator = new Client({ connectionString: url });
    await operator.connect();
  });
  afterAll(async () => {
    await operator?.end();
    await db?.destroy();
    await dropDatabase(url);
  });

  /** What a failure says: its SQLSTATE (or message), and whether callers are told to retry (503) rather than call support (500). */
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => 'no failure',
      (err: { code?: string; message?: string }) => `${err.code ?? err.message}${isTransientFailure(err) ? ' (retry)' : ''}`,
    );

  it('a statement waiting on a lock that a quiet session holds fails with lock_not_available, and the pool goes on', async () => {
    // An operator's psql left open in a transaction, a client that died mid-transaction: the lock may never be released.
    await operator.query('BEGIN');
    await operator.query('SELECT id FROM things WHERE id = 1 FOR UPDATE');
    try {
      expect(await failure(db.query('UPDATE things SET id = 1 WHERE id = 1'))).toBe('55P03 (retry)');
      expect(await failure(db.transaction((tx) => tx.query('SELECT id FROM things WHERE id = 1 FOR UPDATE')))).toBe('55P03 (retry)');
      expect(await db.query('SELECT id FROM things WHERE id = 2 FOR UPDATE')).toEqual([{ id: 2 }]);
    } finally {
      await operator.query('ROLLBACK');
    }
  });

  it('a statement run beside its own transaction on another connection, waiting for that transaction, fails instead of hanging both', async () => {
    // How a relay pass once hung for ever (and with it the service's shutdown): a query of the
    // transaction sent through another pooled connection waited for the transaction's own lock.
    const outcome = await failure(
      db.transaction(async (tx) => {
        await tx.query('SELECT id FROM things WHERE id = 1 FOR UPDATE');
        await db.query('UPDATE things SET id = 1 WHERE id = 1');
      }),
    );
    expect(outcome).toBe('55P03 (retry)');
    expect(await db.query('SELECT id FROM things WHERE id = 1 FOR UPDATE')).toEqual([{ id: 1 }]);
  });

  it('a transaction of ours left idle is ended by PostgreSQL, its locks released and its connection replaced', async () => {
    let resume!: () => void;
    const stalled = failure(
      db.transaction(async (tx) => {
        await tx.query('SELECT id FROM things WHERE id = 1 FOR UPDATE');
        await new Promise<void>((r) => (resume = r)); // a pass stuck on something else (a peer, Redis) while holding a lock
        await tx.query('SELECT 1');
      }),
    );
    // The lock is free again once PostgreSQL has ended the quiet session (not merely timed out here).
    let holder: unknown[] = [{}];
    for (let i = 0; i < 50 && holder.length; i++) {
      await new Promise((r) => setTimeout(r, 100));
      holder = await operator
        .query(
          "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction' AND pid <> pg_backend_pid()",
        )
        .then((r) => r.rows);
    }
    expect(holder).toEqual([]);
    await operator.query('BEGIN');
    await operator.query('SELECT id FROM things WHERE id = 1 FOR UPDATE NOWAIT'); // would fail (55P03) if still held
    await operator.query('ROLLBACK');
    resume();
    expect(await stalled).toMatch(/\(retry\)$/);
    expect(await db.query('SELECT count(*)::int AS n FROM things')).toEqual([{ n: 2 }]);
  });

  it('waiting for a connection from an exhausted pool fails instead of queueing for ever', async () => {
    const releases: Array<() => void> = [];
    const busy = [1, 2].map(() => db.transaction(() => new Promise<void>((r) => releases.push(r))));
    while (releases.length < 2) await new Promise((r) => setTimeout(r, 10));
    expect(await failure(db.query('SELECT 1'))).toMatch(/^timeout exceeded when trying to connect.* \(retry\)$/);
    for (const release of releases) release();
    await Promise.allSettled(busy);
    expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('a statement running longer than the statement timeout is cancelled (57014, answered as a retry), and the pool goes on', async () => {
    const started = Date.now();
    expect(await failure(db.query('SELECT pg_sleep(3)'))).toBe('57014 (retry)');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await failure(db.transaction((tx) => tx.query('SELECT count(*) FROM generate_series(1, 1e9)')))).toBe('57014 (retry)');
    expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('migrations run without the statement timeout (one took twice as long), and every pooled session has it after them', async () => {
    expect(await db.query('SELECT name FROM migrations ORDER BY id')).toEqual([
      { name: 'CreateThings1700000000000' },
      { name: 'SlowBackfill1700000000002' },
    ]);
    const sessions = await Promise.all([1, 2].map(() => db.transaction((tx) => tx.query('SHOW statement_timeout'))));
    expect(sessions).toEqual([[{ statement_timeout: '400ms' }], [{ statement_timeout: '400ms' }]]);
  });

  it('a mistake is not a transient failure: a broken constraint or a bad statement still answers 500 and is logged as a bug', async () => {
    expect(await failure(db.query('INSERT INTO things (id) VALUES (1)'))).toBe('23505');
    expect(await failure(db.query('SELEC 1'))).toBe('42601');
  });
});
