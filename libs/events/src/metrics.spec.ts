import { AggregatorRegistry, Registry } from 'prom-client';
import { TEST_REDIS_URL, uniqueId } from '@trading/testing';
import { consumerMetrics } from './metrics';
import { RedisEventLog } from './redis-event-log';
import { testEvent as event } from './testing/event-logs';

describe('consumerMetrics', () => {
  const line = (text: string, name: string) => new RegExp(`^${name}\\{[^}]*group="g"[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1];

  it('reports lag and unapplied events from the stream, and NaN (unknown) while Redis cannot be read, never a made-up number', async () => {
    const log = await RedisEventLog.connect(TEST_REDIS_URL);
    const stream = `t:${uniqueId()}:events`;
    const registry = new Registry();
    consumerMetrics(registry, log, stream, 'g');
    try {
      await log.ensureGroup(stream, 'g');
      for (let n = 0; n < 3; n++) await log.append(stream, event(n));
      await log.read(stream, 'g', 'c', { count: 1, blockMs: 0, pending: false });
      const healthy = await registry.metrics();
      expect([line(healthy, 'settlement_consumer_lag'), line(healthy, 'settlement_unapplied_events')]).toEqual(['2', '1']);
      expect(line(healthy, 'settlement_dead_letters_total')).toBe('0');
    } finally {
      await log.close();
    }
    // The log's connection is gone: both gauges are unknown (prom-client writes NaN as `Nan`, which Prometheus reads as NaN).
    const away = await registry.metrics();
    for (const name of ['settlement_consumer_lag', 'settlement_unapplied_events']) expect([name, line(away, name)]).toEqual([name, 'Nan']);
  });

  it("combined over processes that answer one scrape (the all-in-one's workers), the stream's figures count once and dead letters add up", async () => {
    const log = await RedisEventLog.connect(TEST_REDIS_URL);
    const stream = `t:${uniqueId()}:events`;
    const workers = [new Registry(), new Registry()];
    const counted = workers.map((registry, n) => consumerMetrics(registry, log, stream, 'g', `c${n}`));
    try {
      await log.ensureGroup(stream, 'g');
      for (let n = 0; n < 3; n++) await log.append(stream, event(n));
      await log.read(stream, 'g', 'c0', { count: 1, blockMs: 0, pending: false });
      counted[0]!.onDeadLetter('forged');
      counted[1]!.onDeadLetter('forged');
      const combined = await AggregatorRegistry.aggregate(await Promise.all(workers.map((r) => r.getMetricsAsJSON()))).metrics();
      expect([line(combined, 'settlement_consumer_lag'), line(combined, 'settlement_unapplied_events')]).toEqual(['2', '1']);
      expect(line(combined, 'settlement_dead_letters_total')).toBe('2');
      expect(/^settlement_unapplied_events_by_consumer\{[^}]*consumer="c0"[^}]*\} (\S+)$/m.exec(combined)?.[1]).toBe('1');
    } finally {
      await log.close();
    }
  });
});
