import { connectStore, MemoryStore, type KeyValueStore } from '@trading/redis';
import { startRedisCluster, type RedisClusterUnderTest } from '@trading/redis/testing';
import { TEST_REDIS_URL, testKeyPrefix, uniqueId } from '@trading/testing';
import { HeldSlots } from './index';

let cluster: RedisClusterUnderTest | undefined;
afterAll(() => cluster?.stop());

// On a Redis Cluster each holder's set falls in a slot of its own.
describe.each([
  ['redis', () => connectStore(TEST_REDIS_URL, { keyPrefix: testKeyPrefix() })],
  [
    'redis cluster',
    async () => {
      cluster = await startRedisCluster(3);
      return connectStore({ REDIS_URL: 'redis://127.0.0.1', REDIS_CLUSTER_NODES: cluster.nodes }, { keyPrefix: testKeyPrefix() });
    },
  ],
  ['memory', async () => new MemoryStore()],
])('HeldSlots on the %s store', (_kind, open) => {
  let store: KeyValueStore;
  beforeAll(async () => {
    store = await open();
  }, 60_000);
  afterAll(() => store.close());

  it('holds at most `max` per holder over every instance sharing the store; a slot given back is free again', async () => {
    const namespace = uniqueId();
    const rule = { name: 'streams', max: 2, leaseMs: 1000 };
    // Two instances of a service: on Redis they share the count (the in-process store is one process's).
    const one = new HeldSlots(store, namespace, rule);
    const two = store instanceof MemoryStore ? one : new HeldSlots(store, namespace, rule);
    const a = await one.take('user-1');
    const b = await two.take('user-1');
    expect([a, b].every(Boolean)).toBe(true);
    expect(await one.take('user-1')).toBeUndefined();
    expect(await two.take('user-1')).toBeUndefined();
    const other = await two.take('user-2');
    expect(other).toBeDefined();

    await one.release(a!);
    await one.release(a!); // harmless twice
    const c = await two.take('user-1');
    expect(c).toBeDefined();
    expect(await one.take('user-1')).toBeUndefined();

    // Held past their lease: renewed, never lapsed.
    await new Promise((r) => setTimeout(r, 1600));
    expect(await one.take('user-1')).toBeUndefined();
    for (const id of [b, c, other]) await two.release(id!);
    expect(one.holding + two.holding).toBe(0);
    const again = await one.take('user-1');
    expect(again).toBeDefined();
    await one.release(again!);
  });
});
