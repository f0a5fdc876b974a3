import { createConnection, createServer, type Socket } from 'node:net';
import { Client } from 'pg';
import { createLogger } from '@trading/logging';
import { dropDatabase, ensureDatabase, withDatabaseName } from './index';
import { listenerName, NotifiedCache } from './notified-cache';

// Not @trading/testing: it is built on this lib, and a spec importing it would make a cycle.
const TEST_POSTGRES_URL = process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const until = async (what: string, done: () => boolean | Promise<boolean>) => {
  for (const deadline = Date.now() + 5000; !(await done()); await new Promise((r) => setTimeout(r, 10)))
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
};

describe('NotifiedCache', () => {
  const url = withDatabaseName(TEST_POSTGRES_URL, `t_${process.pid}_${Date.now().toString(36)}_cache`);
  const db = new Client({ connectionString: url });
  const caches: Array<NotifiedCache<string>> = [];
  const logger = createLogger('cache-spec', 'silent');

  beforeAll(async () => {
    await ensureDatabase(url);
    await db.connect();
    await db.query(`
      CREATE TABLE statuses (owner text PRIMARY KEY, status text NOT NULL);
      CREATE FUNCTION statuses_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('statuses_changed', COALESCE(NEW.owner, OLD.owner));
        RETURN NULL;
      END $$;
      CREATE TRIGGER statuses_changed AFTER INSERT OR UPDATE OR DELETE ON statuses FOR EACH ROW EXECUTE FUNCTION statuses_changed();
      INSERT INTO statuses VALUES ('alice', 'ACTIVE'), ('bob', 'ACTIVE');`);
  });
  afterAll(async () => {
    await Promise.all(caches.map((c) => c.close()));
    await db.end();
    await dropDatabase(url);
  });

  /** An instance's cache over the table, counting the reads that reached the database. */
  function instance(maxEntries = 100) {
    const cache = new NotifiedCache<string>({ url, channel: 'statuses_changed', logger, maxEntries, retryMs: 50 });
    caches.push(cache);
    cache.start();
    let reads = 0;
    const status = (owner: string) =>
      cache.get(owner, async () => {
        reads += 1;
        return (await db.query('SELECT status FROM statuses WHERE owner = $1', [owner])).rows[0]?.status as string;
      });
    return { cache, status, reads: () => reads };
  }

  it('serves from memory until a committed change is notified, on every instance', async () => {
    const a = instance();
    const b = instance();
    await until('both listening', () => a.cache.serving && b.cache.serving);
    expect([await a.status('alice'), await a.status('alice'), await b.status('alice')]).toEqual(['ACTIVE', 'ACTIVE', 'ACTIVE']);
    expect([a.reads(), b.reads()]).toEqual([1, 1]);

    // Not before the commit: a change still in its transaction is not announced.
    await db.query('BEGIN');
    await db.query(`UPDATE statuses SET status = 'RESTRICTED' WHERE owner = 'alice'`);
    await new Promise((r) => setTimeout(r, 100));
    expect(await b.status('alice')).toBe('ACTIVE');
    await db.query('COMMIT');
    await until('both instances to hear of the change', async () => (await a.status('alice')) === 'RESTRICTED');
    await until('the other instance too', async () => (await b.status('alice')) === 'RESTRICTED');
    // Only alice was dropped.
    const readsBefore = b.reads();
    await b.status('bob');
    await b.status('bob');
    expect(b.reads()).toBe(readsBefore + 1);
  });

  it('keeps nothing read while a change was being announced', async () => {
    const a = instance();
    await until('listening', () => a.cache.serving);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // A read that saw the old row, still under way when the change commits and is heard.
    const slow = a.cache.get('bob', async () => {
      const old = (await db.query(`SELECT status FROM statuses WHERE owner = 'bob'`)).rows[0].status as string;
      await gate;
      return old;
    });
    await db.query(`UPDATE statuses SET status = 'CLOSED' WHERE owner = 'bob'`);
    await new Promise((r) => setTimeout(r, 200)); // the notification arrives meanwhile
    release();
    expect(await slow).toBe('ACTIVE');
    expect(await a.status('bob')).toBe('CLOSED'); // the stale value was not kept
  });

  it('reads from the database while it cannot hear changes, and serves again once it listens again', async () => {
    const a = instance();
    await until('listening', () => a.cache.serving);
    await a.status('alice');
    // The listening session is cut (a failover, an idle-session killer): changes made now are never announced to it.
    await db.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1', [
      listenerName('statuses_changed'),
    ]);
    await until('the cache to stop serving', () => !a.cache.serving);
    await db.query(`UPDATE statuses SET status = 'ACTIVE' WHERE owner = 'alice'`);
    expect(await a.status('alice')).toBe('ACTIVE');
    await until('listening again', () => a.cache.serving);
    const reads = a.reads();
    expect([await a.status('alice'), await a.status('alice')]).toEqual(['ACTIVE', 'ACTIVE']);
    expect(a.reads()).toBe(reads + 1);
  });

  it('stops serving from memory when the listening connection goes silent, without a word from the network', async () => {
    // A TCP hop to PostgreSQL that can stop passing bytes while both ends stay open (a dead
    // peer or a half-open connection, which no error or 'end' event ever reports).
    let frozen = false;
    const sockets: Socket[] = [];
    const hop = createServer((client) => {
      const server = createConnection(Number(new URL(url).port || 5432), new URL(url).hostname);
      sockets.push(client, server);
      client.on('data', (chunk) => void (frozen || server.write(chunk)));
      server.on('data', (chunk) => void (frozen || client.write(chunk)));
      client.on('error', () => server.destroy());
      server.on('error', () => client.destroy());
    });
    await new Promise<void>((r) => hop.listen(0, '127.0.0.1', r));
    const viaHop = new URL(url);
    viaHop.hostname = '127.0.0.1';
    viaHop.port = String((hop.address() as { port: number }).port);
    const cache = new NotifiedCache<string>({
      url: viaHop.toString(),
      channel: 'statuses_changed',
      logger,
      maxEntries: 100,
      heartbeatMs: 100,
      probeTimeoutMs: 200,
      retryMs: 60_000,
    });
    caches.push(cache);
    cache.start();
    const status = () =>
      cache.get('alice', async () => (await db.query(`SELECT status FROM statuses WHERE owner = 'alice'`)).rows[0].status as string);
    try {
      await until('listening through the hop', () => cache.serving);
      expect(await status()).toBe('ACTIVE');
      frozen = true;
      await db.query(`UPDATE statuses SET status = 'RESTRICTED' WHERE owner = 'alice'`); // never heard through the frozen hop
      await until('the heartbeat to notice', () => !cache.serving);
      expect(await status()).toBe('RESTRICTED');
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => hop.close(r));
      await db.query(`UPDATE statuses SET status = 'ACTIVE' WHERE owner = 'alice'`);
    }
  });

  it('keeps at most maxEntries keys, and with 0 is off', async () => {
    const small = instance(1);
    await until('listening', () => small.cache.serving);
    await small.status('alice');
    await small.status('bob'); // alice dropped
    await small.status('alice');
    expect(small.reads()).toBe(3);
    const off = instance(0);
    await new Promise((r) => setTimeout(r, 100));
    expect(off.cache.serving).toBe(false);
    await off.status('alice');
    await off.status('alice');
    expect(off.reads()).toBe(2);
  });
});
