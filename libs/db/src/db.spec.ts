import { Client } from 'pg';
import { databaseNameOf, dropDatabase, ensureDatabase, openDatabase, withDatabaseName } from './index';

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
