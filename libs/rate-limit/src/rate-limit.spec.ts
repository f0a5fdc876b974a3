import type { Response } from 'express';
import { Registry } from 'prom-client';
import { connectStore, MemoryStore, openRedisClient, RedisStore, type KeyValueStore } from '@trading/redis';
import { startRedisCluster, type RedisClusterUnderTest } from '@trading/redis/testing';
import { TEST_REDIS_URL, testKeyPrefix, uniqueId } from '@trading/testing';
import { ApiLimits, FailureLimiter, rateLimited, rateLimitHeaders, rateLimitRefusals, RequestLimiter, tightest } from './index';

describe.each([
  ['redis', () => connectStore(TEST_REDIS_URL, { keyPrefix: testKeyPrefix() })],
  ['redis (tracked reads)', () => connectStore(TEST_REDIS_URL, { keyPrefix: testKeyPrefix(), cachedReads: { maxEntries: 100 } })],
  ['memory', async () => new MemoryStore()],
])('FailureLimiter on the %s store', (_kind, open) => {
  let store: KeyValueStore;
  beforeAll(async () => {
    store = await open();
  });
  afterAll(() => store.close());

  it('blocks a key once its failures reach the limit, and only that key', async () => {
    const limiter = new FailureLimiter(store, uniqueId(), { name: 'login', maxFailures: 3, windowSeconds: 60 });
    expect(await limiter.state('a')).toMatchObject({ limit: 3, remaining: 3, blocked: false, resetSeconds: 60 });
    await limiter.fail('a');
    await limiter.fail('a');
    expect(await limiter.state('a')).toMatchObject({ remaining: 1, blocked: false });
    const third = await limiter.fail('a');
    expect(third).toMatchObject({ remaining: 0, blocked: true });
    expect(third.resetSeconds).toBeGreaterThan(0);
    expect(third.resetSeconds).toBeLessThanOrEqual(60);
    expect((await limiter.fail('a')).blocked).toBe(true);
    expect((await limiter.state('b')).blocked).toBe(false);
    expect(await limiter.ifBlocked('a')).toMatchObject({ blocked: true, remaining: 0 });
    expect(await limiter.ifBlocked('b')).toBeUndefined();
    await limiter.clear('a');
    expect((await limiter.state('a')).blocked).toBe(false);
    expect(await limiter.ifBlocked('a')).toBeUndefined();
  });

  it('keeps namespaces apart', async () => {
    const rule = { name: 'login', maxFailures: 1, windowSeconds: 60 };
    const one = new FailureLimiter(store, uniqueId(), rule);
    const two = new FailureLimiter(store, uniqueId(), rule);
    await one.fail('same-key');
    expect((await one.state('same-key')).blocked).toBe(true);
    expect((await two.state('same-key')).blocked).toBe(false);
  });

  it('starts a fresh window when the old one ends', async () => {
    const limiter = new FailureLimiter(store, uniqueId(), { name: 'short', maxFailures: 1, windowSeconds: 1 });
    expect((await limiter.fail('k')).blocked).toBe(true);
    expect(await limiter.ifBlocked('k')).toBeDefined();
    await new Promise((r) => setTimeout(r, 1100));
    expect(await limiter.ifBlocked('k')).toBeUndefined();
    expect((await limiter.state('k')).blocked).toBe(false);
  });
});

/** What ApiLimits uses of an Express response: its locals and the headers it sets. */
function answer() {
  const headers: Record<string, string> = {};
  const res = { locals: {}, set: (h: Record<string, string>) => Object.assign(headers, h) } as unknown as Response;
  return { res, headers };
}

/** The code an ApiLimits call threw, or 'ok'. */
const outcome = (call: Promise<void>) =>
  call.then(
    () => 'ok',
    (err: { code?: string; options?: { details?: { budget?: string } } }) => `${err.code}:${err.options?.details?.budget ?? ''}`,
  );

let cluster: RedisClusterUnderTest | undefined;
afterAll(() => cluster?.stop());

// On a Redis Cluster a token's, an app's and a user's counters fall in different slots.
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
])('ApiLimits on the %s store', (_kind, open) => {
  let store: KeyValueStore;
  beforeAll(async () => {
    store = await open();
  }, 60_000);
  afterAll(() => store.close());

  const limitsWith = (perMinute: Partial<Record<'token' | 'user' | 'orders' | 'userOrders' | 'app', number>>) => {
    const namespace = uniqueId();
    const limits = new ApiLimits(store, {
      API_RATE_LIMIT_PER_MINUTE: perMinute.token ?? 0,
      API_USER_RATE_LIMIT_PER_MINUTE: perMinute.user ?? 0,
      API_APP_RATE_LIMIT_PER_MINUTE: perMinute.app ?? 0,
      API_ORDER_RATE_LIMIT_PER_MINUTE: perMinute.orders ?? 0,
      API_USER_ORDER_RATE_LIMIT_PER_MINUTE: perMinute.userOrders ?? 0,
      API_ADDRESS_RATE_LIMIT_PER_MINUTE: 0,
      API_RATE_LIMIT_NAMESPACE: namespace,
    });
    return { limits, namespace };
  };

  it("charges the user only for what the token's own budget allowed", async () => {
    const { limits } = limitsWith({ token: 2, user: 5 });
    const leaked = { sub: 'u1', patId: 'p1' };
    const other = { sub: 'u1', patId: 'p2' };
    const leakedRuns = [];
    for (let i = 0; i < 4; i++) leakedRuns.push(await outcome(limits.forCaller(answer().res, leaked)));
    expect(leakedRuns).toEqual(['ok', 'ok', 'RATE_LIMITED:token', 'RATE_LIMITED:token']);
    // The user's budget of 5 holds the leaked token's 2 accepted requests only: 3 more fit.
    const otherRuns = [];
    for (let i = 0; i < 3; i++) otherRuns.push(await outcome(limits.forCaller(answer().res, other)));
    expect(otherRuns).toEqual(['ok', 'ok', 'RATE_LIMITED:token']);
    expect(await outcome(limits.forCaller(answer().res, { sub: 'u1', patId: 'p3' }))).toBe('ok');
    expect(await outcome(limits.forCaller(answer().res, { sub: 'u1', patId: 'p4' }))).toBe('RATE_LIMITED:user');
  });

  it("charges a vendor app's budget over all its users, between the token's and the user's", async () => {
    const { limits } = limitsWith({ token: 10, app: 2, user: 10 });
    const { res, headers } = answer();
    expect(await outcome(limits.forCaller(res, { sub: 'a', clientId: 'app1' }))).toBe('ok');
    expect(headers['X-RateLimit-Budget']).toBe('app'); // the tightest budget it used
    expect(await outcome(limits.forCaller(answer().res, { sub: 'b', clientId: 'app1' }))).toBe('ok');
    expect(await outcome(limits.forCaller(answer().res, { sub: 'c', clientId: 'app1' }))).toBe('RATE_LIMITED:app');
    expect(await outcome(limits.forCaller(answer().res, { sub: 'c', clientId: 'app2' }))).toBe('ok');
  });

  it('refuses several orders whole and gives their points back', async () => {
    const { limits } = limitsWith({ orders: 5, userOrders: 20 });
    const caller = { sub: 'u', patId: 'p' };
    const { res, headers } = answer();
    expect(await outcome(limits.forOrders(res, caller, 10))).toBe('RATE_LIMITED:orders');
    expect(headers['Retry-After']).toMatch(/^\d+$/);
    expect(await outcome(limits.forOrders(answer().res, caller, 5))).toBe('ok');
    expect(await outcome(limits.forOrders(answer().res, caller, 1))).toBe('RATE_LIMITED:orders');
    // The user's order budget kept only the 5 that ran (and the single refused one): 14 more fit.
    expect(await outcome(limits.forOrders(answer().res, { sub: 'u', patId: 'q' }, 5))).toBe('ok');
  });

  it("gives a refused request's points back to the budgets charged before the one that refused it", async () => {
    const { limits } = limitsWith({ orders: 5, userOrders: 3 });
    const caller = { sub: 'u', patId: 'p' };
    // The token's order budget takes 5, the user's refuses them: the token's 5 come back.
    expect(await outcome(limits.forOrders(answer().res, caller, 5))).toBe('RATE_LIMITED:user-orders');
    expect(await outcome(limits.forOrders(answer().res, caller, 3))).toBe('ok');
    expect(await outcome(limits.forOrders(answer().res, caller, 1))).toBe('RATE_LIMITED:user-orders');
  });

  it('gives points back only to the budgets a refused request was charged to', async () => {
    const { limits } = limitsWith({ orders: 5, userOrders: 6 });
    // Refused by the token's own budget: the user's was never charged, and gains nothing.
    expect(await outcome(limits.forOrders(answer().res, { sub: 'u', patId: 'p' }, 10))).toBe('RATE_LIMITED:orders');
    expect(await outcome(limits.forOrders(answer().res, { sub: 'u', patId: 'q' }, 5))).toBe('ok');
    expect(await outcome(limits.forOrders(answer().res, { sub: 'u', patId: 'r' }, 5))).toBe('RATE_LIMITED:user-orders');
  });

  it('lets everything through when every budget is off', async () => {
    const { limits } = limitsWith({});
    expect(await outcome(limits.forCaller(answer().res, { sub: 'u', patId: 'p' }))).toBe('ok');
    expect(await outcome(limits.forOrders(answer().res, { sub: 'u', patId: 'p' }, 50))).toBe('ok');
  });
});

describe('FailureLimiter.ifBlocked on Redis with tracked reads', () => {
  it("sees failures another instance counted after this one remembered the key's count", async () => {
    const prefix = testKeyPrefix();
    const here = await connectStore(TEST_REDIS_URL, { keyPrefix: prefix, cachedReads: { maxEntries: 100 } });
    const there = await connectStore(TEST_REDIS_URL, { keyPrefix: prefix });
    try {
      const namespace = uniqueId();
      const rule = { name: 'oauth-address', maxFailures: 2, windowSeconds: 60 };
      const mine = new FailureLimiter(here, namespace, rule);
      const theirs = new FailureLimiter(there, namespace, rule);
      expect(await mine.ifBlocked('203.0.113.9')).toBeUndefined(); // read once: now answered from memory
      expect(await mine.ifBlocked('203.0.113.9')).toBeUndefined();
      await theirs.fail('203.0.113.9');
      await theirs.fail('203.0.113.9');
      expect(await mine.ifBlocked('203.0.113.9')).toMatchObject({ blocked: true, budget: 'oauth-address' });
    } finally {
      await here.close();
      await there.close();
    }
  });
});

describe('FailureLimiter.ifBlocked right after a failure at the same instance', () => {
  it('sees a failure it is still counting, not the count it remembered before it', async () => {
    const store = await connectStore(TEST_REDIS_URL, { keyPrefix: testKeyPrefix(), cachedReads: { maxEntries: 100 } });
    try {
      const limiter = new FailureLimiter(store, uniqueId(), { name: 'oauth-address', maxFailures: 1, windowSeconds: 60 });
      expect(await limiter.ifBlocked('203.0.113.7')).toBeUndefined(); // the count (none) is now remembered
      // As the facade does: the failure is counted after the answer, and the caller's next request is checked at once.
      const counted = limiter.fail('203.0.113.7');
      expect(await limiter.ifBlocked('203.0.113.7')).toMatchObject({ blocked: true });
      await counted;
      expect(await limiter.ifBlocked('203.0.113.7')).toMatchObject({ blocked: true });
    } finally {
      await store.close();
    }
  });
});

describe('ApiLimits on Redis', () => {
  it("charges a request's budgets in one round trip, and an order's in one more", async () => {
    const prefix = testKeyPrefix();
    const store = await connectStore(TEST_REDIS_URL, { keyPrefix: prefix });
    const monitor = await openRedisClient(TEST_REDIS_URL);
    const seen: string[] = [];
    await monitor.monitor((line) => {
      // Commands from scripts are shown as `[0 lua]`: only the client's own round trips count here.
      if (line.includes(prefix) && !line.includes(' lua]')) seen.push(line);
    });
    try {
      const limits = new ApiLimits(store, {
        API_RATE_LIMIT_PER_MINUTE: 10,
        API_APP_RATE_LIMIT_PER_MINUTE: 100,
        API_ORDER_RATE_LIMIT_PER_MINUTE: 10,
        API_ADDRESS_RATE_LIMIT_PER_MINUTE: 10,
        API_RATE_LIMIT_NAMESPACE: uniqueId(),
      });
      const caller = { sub: 'u', clientId: 'app' };
      await limits.forCaller(answer().res, caller);
      await limits.forOrders(answer().res, caller);
      await store.get('marker'); // MONITOR shows commands in order: once this is seen, so are the ones before it
      for (let i = 0; i < 50 && !seen.some((l) => l.includes('marker')); i++) await new Promise((r) => setTimeout(r, 20));
      const charges = seen.filter((l) => !l.includes('marker'));
      expect(charges).toHaveLength(2);
      // Three budgets (token, app, user) in the first, two (orders, user-orders) in the second.
      expect(charges.map((l) => (l.match(/:ratelimit:/g) ?? []).length)).toEqual([3, 2]);
    } finally {
      await monitor.close().catch(() => monitor.destroy());
      await store.close();
    }
  });

  it('counts under the same keys as a lone RequestLimiter of the same budget (facade and gateway share counts)', async () => {
    const store = await connectStore(TEST_REDIS_URL, { keyPrefix: testKeyPrefix() });
    const namespace = uniqueId();
    const limits = new ApiLimits(store, {
      API_RATE_LIMIT_PER_MINUTE: 3,
      API_ORDER_RATE_LIMIT_PER_MINUTE: 0,
      API_ADDRESS_RATE_LIMIT_PER_MINUTE: 0,
      API_RATE_LIMIT_NAMESPACE: namespace,
    });
    await limits.forCaller(answer().res, { sub: 'u', patId: 'p' });
    await limits.forCaller(answer().res, { sub: 'u', patId: 'p' });
    const lone = new RequestLimiter(store, namespace, { name: 'token', perMinute: 3 });
    expect(await lone.take('pat:p')).toMatchObject({ remaining: 0, blocked: false });
    expect(await lone.take('pat:p')).toMatchObject({ blocked: true });
    await store.close();
  });

  it('fails closed when Redis cannot answer', async () => {
    const store = await connectStore(TEST_REDIS_URL, { keyPrefix: testKeyPrefix() });
    expect(store).toBeInstanceOf(RedisStore);
    const limits = new ApiLimits(store, {
      API_RATE_LIMIT_PER_MINUTE: 10,
      API_ORDER_RATE_LIMIT_PER_MINUTE: 10,
      API_ADDRESS_RATE_LIMIT_PER_MINUTE: 10,
      API_RATE_LIMIT_NAMESPACE: uniqueId(),
    });
    await store.close();
    await expect(limits.forCaller(answer().res, { sub: 'u', patId: 'p' })).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: 'Rate limiting is temporarily unavailable; retry shortly',
    });
  });
});

describe('limit answers', () => {
  const open = { limit: 10, remaining: 7, resetSeconds: 30, windowSeconds: 60, blocked: false };
  const shut = { limit: 20, remaining: 0, resetSeconds: 12, windowSeconds: 900, blocked: true };

  it('report the blocked or tightest state', () => {
    expect(tightest([open, shut])).toBe(shut);
    expect(tightest([open, { ...open, remaining: 2 }]).remaining).toBe(2);
  });

  it('carry RateLimit-* headers, Retry-After when blocked, and a 429 problem', () => {
    const now = Math.ceil(Date.now() / 1000);
    expect(rateLimitHeaders(open)).toEqual({
      'RateLimit-Limit': '10',
      'RateLimit-Remaining': '7',
      'RateLimit-Reset': '30',
      'RateLimit-Policy': '10;w=60',
      'X-RateLimit-Limit': '10',
      'X-RateLimit-Remaining': '7',
      'X-RateLimit-Reset': expect.stringMatching(/^\d+$/),
    });
    expect(Number(rateLimitHeaders(open)['X-RateLimit-Reset']) - now).toBeGreaterThanOrEqual(30);
    expect(rateLimitHeaders(shut)['Retry-After']).toBe('12');
    // A named budget says which one binds, in both spellings.
    expect(rateLimitHeaders({ ...shut, budget: 'token' })).toMatchObject({
      'RateLimit-Policy': '"token";q=20;w=900',
      'X-RateLimit-Budget': 'token',
    });
    const err = rateLimited(shut);
    expect(err).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    expect(err.options.details).toEqual({ retryAfterSeconds: 12 });
    expect(rateLimited({ ...shut, budget: 'app' }).options.details).toEqual({ retryAfterSeconds: 12, budget: 'app' });
  });

  it('fails closed when the store cannot answer', async () => {
    const store = await connectStore(TEST_REDIS_URL, { keyPrefix: testKeyPrefix() });
    const limiter = new FailureLimiter(store, uniqueId(), { name: 'x', maxFailures: 1, windowSeconds: 60 });
    await store.close();
    await expect(limiter.state('k')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });

  it('count refusals in one rate_limit_refusals_total{limit} per registry, whoever asks for it', async () => {
    const registry = new Registry();
    const refusals = rateLimitRefusals(registry);
    const settings = {
      API_RATE_LIMIT_PER_MINUTE: 1,
      API_ORDER_RATE_LIMIT_PER_MINUTE: 1,
      API_ADDRESS_RATE_LIMIT_PER_MINUTE: 1,
      API_RATE_LIMIT_NAMESPACE: uniqueId(),
    };
    expect(() => new ApiLimits(new MemoryStore(), settings, registry)).not.toThrow();
    expect(rateLimitRefusals(registry)).toBe(refusals);
    refusals.inc({ limit: 'sign_in' });
    expect(await registry.getSingleMetricAsString('rate_limit_refusals_total')).toContain('rate_limit_refusals_total{limit="sign_in"} 1');
    expect(rateLimitRefusals(new Registry())).not.toBe(refusals);
  });
});
