import { Client } from 'pg';
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
});
