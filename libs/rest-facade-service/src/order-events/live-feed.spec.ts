import { RedisEventLog } from '@trading/events';
import { createLogger } from '@trading/logging';
import { startRedisSentinel, type RedisSentinelUnderTest } from '@trading/redis/testing';
import { testKeys } from '@trading/testing';
import { HOLDER_CHANGED_REASON, LiveOrderFeed } from './live-feed';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The live order feed behind Sentinel: a promoted replica may lack the newest entries (Redis
 * replicates asynchronously), and the feed's cursor carries on regardless, so each open stream
 * must hear of a possible gap. A real primary, replica and three Sentinels; the primary killed.
 */
describe('live order feed, its Redis failing over', () => {
  let redis: RedisSentinelUnderTest;
  let log: RedisEventLog;
  let feed: LiveOrderFeed;

  beforeAll(async () => {
    redis = await startRedisSentinel('feed');
    log = await RedisEventLog.connect({
      REDIS_URL: `redis://127.0.0.1:${redis.primaryPort}`,
      REDIS_SENTINELS: redis.sentinels,
      REDIS_SENTINEL_NAME: redis.name,
    });
    feed = new LiveOrderFeed(log, 'feed:events', testKeys().trusted, createLogger('rest-facade', 'silent'), 100);
  });
  afterAll(async () => {
    await feed.close();
    await log.close();
    await redis.stop();
  });

  it('tells every open stream of a gap once the replica took over, and never while the primary stands', async () => {
    const gaps: Record<string, string[]> = { a: [], b: [] };
    const offA = feed.subscribe(
      'account-a',
      () => undefined,
      (reason) => gaps['a']!.push(reason),
    );
    const offB = feed.subscribe(
      'account-b',
      () => undefined,
      (reason) => gaps['b']!.push(reason),
    );
    await sleep(1000); // ten checks of who holds the stream
    expect(gaps).toEqual({ a: [], b: [] });

    await redis.killPrimary();
    const deadline = Date.now() + 20_000;
    while (gaps['a']!.length + gaps['b']!.length < 2 && Date.now() < deadline) await sleep(100);
    await sleep(500); // and only once
    expect(gaps).toEqual({ a: [HOLDER_CHANGED_REASON], b: [HOLDER_CHANGED_REASON] });
    offA();
    offB();
  }, 60_000);
});
