import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { createLogger } from '@trading/logging';
import { startRedisCluster, type RedisClusterUnderTest } from '@trading/redis/testing';
import { TEST_REDIS_URL, uniqueId } from '@trading/testing';
import { deadLetterStream } from '../dead-letters';
import type { EventLog } from '../event-log';
import { MemoryEventLog } from '../memory-event-log';
import { RedisEventLog } from '../redis-event-log';
import { StreamConsumer, type ConsumerOptions } from '../stream-consumer';

/** A numbered test event. */
export const testEvent = (n: number) => ({ eventId: randomUUID(), type: 'test.happened', payload: { n } });

/** The current test's log and its own stream (read them inside a test, not when describing). */
export interface EventLogUnderTest {
  log: EventLog;
  stream: string;
  /** On a Redis Cluster. */
  cluster?: boolean;
}

/**
 * Describes the same behaviour against both event logs, the in-memory one of the all-in-one
 * and Redis Streams: each test gets a fresh log and a stream of its own, deleted afterwards (its dead letters too).
 */
export function describeEachEventLog(title: string, tests: (current: EventLogUnderTest) => void): void {
  // A three-primary Redis Cluster of the spec file's own, started for its first test and
  // stopped with the file (its streams go with it).
  let cluster: Promise<RedisClusterUnderTest> | undefined;
  afterAll(async () => (await cluster)?.stop());
  describe.each([
    ['memory', async (): Promise<EventLog> => new MemoryEventLog()],
    ['redis', async (): Promise<EventLog> => RedisEventLog.connect(TEST_REDIS_URL)],
    [
      'redis cluster',
      async (): Promise<EventLog> =>
        RedisEventLog.connect({ REDIS_URL: 'redis://127.0.0.1', REDIS_CLUSTER_NODES: (await (cluster ??= startRedisCluster(3))).nodes }),
    ],
  ])(`${title} (%s event log)`, (kind, open) => {
    const current = {} as EventLogUnderTest;
    beforeEach(async () => {
      current.log = await open();
      current.cluster = kind === 'redis cluster';
      current.stream = `t:${uniqueId()}:events`;
    }, 60_000);
    afterEach(async () => {
      if (current.log.kind === 'redis' && !current.cluster) {
        const r = await createClient({ url: TEST_REDIS_URL }).connect();
        await r.del([current.stream, deadLetterStream(current.stream)]);
        r.destroy();
      }
      await current.log.close();
    });
    tests(current);
  });
}

/** A consumer of group `g` on the test's stream that polls every 50 ms; `options` says what it does. */
export const testConsumer = (
  { log, stream }: EventLogUnderTest,
  options: Omit<ConsumerOptions, 'log' | 'stream' | 'group' | 'logger'> & { group?: string },
) => new StreamConsumer({ group: 'g', logger: createLogger('events', 'silent'), blockMs: 50, ...options, log, stream });
