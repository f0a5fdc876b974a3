import { Counter, Gauge, type Registry } from 'prom-client';
import type { EventLog } from './event-log';
import { defaultConsumerName } from './stream-consumer';

/**
 * A settlement consumer group's health on /metrics: how many events wait on the stream for it
 * (lag: the group falls behind), how many delivered events it has not applied yet (a stuck
 * consumer shows here first, and per consumer which instance holds them), and how many it refused to the dead-letter
 * stream (any at all deserves a look: forged, or a producer bug). A gauge it cannot read right
 * now is NaN (unknown), never a number a dashboard's max() would plot or hide. The gauges are
 * read from the stream, so every process reports the same figure: processes that answer one
 * scrape together (the all-in-one's workers) take it once (`max`), not their sum.
 */
export function consumerMetrics(
  registry: Registry,
  log: EventLog,
  stream: string,
  group: string,
  /** This instance's consumer name: always reported, 0 when it holds nothing. */
  self = defaultConsumerName(group),
): { onDeadLetter(reason: string): void } {
  const deadLetters = new Counter({
    name: 'settlement_dead_letters_total',
    help: 'Settlement events refused to the dead-letter stream',
    labelNames: ['group'],
    registers: [registry],
  });
  new Gauge({
    name: 'settlement_unapplied_events',
    aggregator: 'max',
    help: 'Settlement events delivered to the consumer group and not applied yet',
    labelNames: ['group'],
    registers: [registry],
    async collect() {
      this.set({ group }, await log.pendingCount(stream, group).catch(() => NaN));
    },
  });
  new Gauge({
    name: 'settlement_unapplied_events_by_consumer',
    aggregator: 'max',
    help: 'Settlement events delivered and not applied yet, per consumer holding them (a dead instance keeps its name until they are taken over)',
    labelNames: ['group', 'consumer'],
    registers: [registry],
    async collect() {
      const held = await log.pendingByConsumer(stream, group).catch(() => null);
      this.reset();
      if (held) this.set({ group, consumer: self }, 0);
      if (held) for (const [consumer, count] of Object.entries(held)) this.set({ group, consumer }, count);
    },
  });
  new Gauge({
    name: 'settlement_consumer_lag',
    aggregator: 'max',
    help: 'Settlement events on the stream not yet delivered to the consumer group',
    labelNames: ['group'],
    registers: [registry],
    async collect() {
      this.set({ group }, (await log.groupLag(stream, group).catch(() => null)) ?? NaN);
    },
  });
  deadLetters.inc({ group }, 0);
  return { onDeadLetter: () => deadLetters.inc({ group }) };
}
