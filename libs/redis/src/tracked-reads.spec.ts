import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { connectStore, RedisStore } from './index';

const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** Session reads at the edges: from memory while Redis vouches for them, never stale after a change anywhere. */
describe('cached reads (RESP3 client-side caching)', () => {
  const prefix = `test:${randomUUID()}:`;
  let edge: RedisStore;
  let elsewhere: RedisStore;
  beforeAll(async () => {
    edge = (await connectStore(REDIS_URL, { keyPrefix: prefix, cachedReads: { maxEntries: 100 } })) as RedisStore;
    elsewhere = (await connectStore(REDIS_URL, { keyPrefix: prefix })) as RedisStore;
  });
  afterAll(async () => {
    await edge.close();
    await elsewhere.close();
  });

  it('answers repeated reads from memory, and the very next read after another client changes or deletes the key sees it', async () => {
    await elsewhere.set('session:a', 'live', 60);
    const before = edge.cacheStats()!;
    expect(await edge.getCached('session:a')).toBe('live');
    expect(await edge.getCached('session:a')).toBe('live');
    expect(await edge.getCached('session:a')).toBe('live');
    const after = edge.cacheStats()!;
    expect([after.misses - before.misses, after.hits - before.hits]).toEqual([1, 2]);

    // Revocation through another connection (another instance): no wait, the next read is current.
    // A request can reach another instance only after the change was acknowledged and someone made
    // another round trip; Redis writes its invalidation push before it answers anything it reads
    // after the change, so one round trip of the writer's (not a timer) stands for that. Without it
    // the reply and the push race on two sockets of this one process, which no deployment has.
    await elsewhere.set('session:a', 'changed', 60);
    await elsewhere.ping();
    expect(await edge.getCached('session:a')).toBe('changed');
    await elsewhere.del('session:a');
    await elsewhere.ping();
    expect(await edge.getCached('session:a')).toBeNull();
    // And a raw client outside the platform's store (an operator's redis-cli) is seen the same way.
    await elsewhere.set('session:b', 'live', 60);
    expect(await edge.getCached('session:b')).toBe('live');
    const operator = await createClient({ url: REDIS_URL }).connect();
    try {
      await operator.del(`${prefix}session:b`);
    } finally {
      operator.destroy();
    }
    await elsewhere.ping();
    expect(await edge.getCached('session:b')).toBeNull();
  });

  it('forgets at once what the store itself changed (auth and the edges share one store in the all-in-one)', async () => {
    await edge.set('session:c', 'live', 60);
    expect(await edge.getCached('session:c')).toBe('live');
    expect(await edge.getCached('session:c')).toBe('live');
    const entries = edge.cacheStats()!.entries;
    // Dropped from memory when the delete resolves, whether or not Redis's push has been read yet.
    await edge.del('session:c');
    expect(edge.cacheStats()!.entries).toBe(entries - 1);
    expect(await edge.getCached('session:c')).toBeNull();
  });

  it('keeps the prefix apart: a key of another prefix with the same name is neither read nor cached', async () => {
    const other = (await connectStore(REDIS_URL, { keyPrefix: `test:${randomUUID()}:`, cachedReads: { maxEntries: 10 } })) as RedisStore;
    try {
      await elsewhere.set('session:c', 'mine', 60);
      expect(await other.getCached('session:c')).toBeNull();
      expect(await edge.getCached('session:c')).toBe('mine');
    } finally {
      await other.close();
    }
  });

  it('without caching asked for, reads go to Redis every time', async () => {
    await elsewhere.set('session:d', 'x', 60);
    expect(await elsewhere.getCached('session:d')).toBe('x');
    expect(elsewhere.cacheStats()).toBeUndefined();
  });
});
