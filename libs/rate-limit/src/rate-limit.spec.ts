import { Registry } from 'prom-client';
import { connectStore, MemoryStore, type KeyValueStore } from '@trading/redis';
import { TEST_REDIS_URL, testKeyPrefix, uniqueId } from '@trading/testing';
import { ApiLimits, FailureLimiter, rateLimited, rateLimitHeaders, rateLimitRefusals, tightest } from './index';

describe.each([
  ['redis', () => connectStore(TEST_REDIS_URL, { keyPrefix: testKeyPrefix() })],
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
    await limiter.clear('a');
    expect((await limiter.state('a')).blocked).toBe(false);
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
    await new Promise((r) => setTimeout(r, 1100));
    expect((await limiter.state('k')).blocked).toBe(false);
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
