import { randomUUID } from 'node:crypto';
import { startRedisCluster, type RedisClusterUnderTest } from './testing/redis-servers';
import { connectStore, MemoryStore, type KeyValueStore } from './index';

const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

let cluster: RedisClusterUnderTest | undefined;
afterAll(() => cluster?.stop());

// The same contract on one server, on a three-primary Redis Cluster (where the keys of one swap
// fall in different slots, which a single script may not span), and in memory.
describe.each([
  ['redis', () => connectStore(REDIS_URL, { keyPrefix: `test:${randomUUID()}:` })],
  [
    'redis cluster',
    async () => {
      cluster = await startRedisCluster(3);
      return connectStore(
        { REDIS_URL: 'redis://127.0.0.1', REDIS_CLUSTER_NODES: cluster.nodes },
        { keyPrefix: `test:${randomUUID()}:`, cachedReads: { maxEntries: 100 } },
      );
    },
  ],
  ['memory', async () => new MemoryStore()],
])('%s store', (_kind, open) => {
  let store: KeyValueStore;
  beforeAll(async () => {
    store = await open();
  }, 60_000);
  afterAll(() => store.close());

  it('answers cached reads with what was last written, wherever it was written', async () => {
    await store.set('session', 'live', 60);
    expect(await store.getCached('session')).toBe('live');
    expect(await store.getCached('session')).toBe('live');
    await store.del('session');
    expect(await store.getCached('session')).toBeNull();
  });

  it('sets, reads and deletes values', async () => {
    await store.set('a', '1');
    expect(await store.get('a')).toBe('1');
    expect(await store.del('a', 'missing')).toBe(1);
    expect(await store.get('a')).toBeNull();
  });

  it('expires values after their time to live', async () => {
    await store.set('short', 'x', 1);
    expect(await store.get('short')).toBe('x');
    await new Promise((r) => setTimeout(r, 1100));
    expect(await store.get('short')).toBeNull();
  });

  it('keeps set members', async () => {
    await store.addToSet('s', 'one', 60);
    await store.addToSet('s', 'two', 60);
    expect((await store.members('s')).sort()).toEqual(['one', 'two']);
  });

  it('swaps a single-use key atomically: one winner, later uses see it spent, nothing written for them', async () => {
    await store.set('old', 'first', 60);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => store.swap('old', `new-${i}`, `v${i}`, 60)));
    const winners = results.filter((r) => r && !r.spent);
    expect(winners).toEqual([{ value: 'first', spent: false }]);
    expect(results.filter((r) => r?.spent)).toHaveLength(9);
    const written = (await Promise.all(results.map((_, i) => store.get(`new-${i}`)))).filter(Boolean);
    expect(written).toHaveLength(1);
    expect(await store.swap('old', 'again', 'x', 60)).toEqual({ value: 'first', spent: true, spentAt: expect.any(Number) });
    expect(Math.abs((await store.swap('old', 'again', 'x', 60))!.spentAt! - Date.now())).toBeLessThan(5000);
    expect(await store.get('again')).toBeNull();
    expect(await store.swap('missing', 'never', 'x', 60)).toBeNull();
    expect(await store.get('never')).toBeNull();
  });

  it("makes a swap's other writes only for the swap that spends the key, in the same step", async () => {
    await store.set('rt-old', 'grant', 60);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        store.swap('rt-old', `rt-new-${i}`, `v${i}`, 60, {
          values: [{ key: `session-${i}`, value: `s${i}`, ttlSeconds: 30 }],
          members: [{ key: 'grant-index', member: `session-${i}`, ttlSeconds: 30 }],
        }),
      ),
    );
    const winner = results.findIndex((r) => r && !r.spent);
    expect(results.filter((r) => r && !r.spent)).toHaveLength(1);
    const sessions = await Promise.all(results.map((_, i) => store.get(`session-${i}`)));
    expect(sessions).toEqual(results.map((_, i) => (i === winner ? `s${i}` : null)));
    expect(await store.members('grant-index')).toEqual([`session-${winner}`]);
    // Nothing for a missing key either.
    expect(await store.swap('rt-missing', 'rt-never', 'x', 60, { values: [{ key: 'orphan', value: 'o', ttlSeconds: 30 }] })).toBeNull();
    expect(await store.get('orphan')).toBeNull();
  });

  it('keeps the time to live of a spent key', async () => {
    await store.set('brief', 'x', 1);
    expect((await store.swap('brief', 'next', 'y', 60))?.spent).toBe(false);
    await new Promise((r) => setTimeout(r, 1100));
    expect(await store.swap('brief', 'next2', 'z', 60)).toBeNull();
    expect(await store.get('next')).toBe('y');
  });

  it('counts hits within a window', async () => {
    const first = await store.hit('h', 60);
    const second = await store.hit('h', 60);
    expect([first.count, second.count]).toEqual([1, 2]);
    expect(second.resetSeconds).toBeGreaterThan(0);
    expect(second.resetSeconds).toBeLessThanOrEqual(60);
  });
});

describe('connectStore', () => {
  it('falls back to memory only when asked, and says why', async () => {
    await expect(connectStore('redis://127.0.0.1:1')).rejects.toThrow(/cannot reach Redis/);
    let reason = '';
    const store = await connectStore('redis://127.0.0.1:1', { fallbackToMemory: true, onFallback: (r) => (reason = r) });
    expect(store.kind).toBe('memory');
    expect(reason).toContain('127.0.0.1:1');
  });
});
