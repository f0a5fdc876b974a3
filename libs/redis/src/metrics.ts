import { Gauge, type Registry } from 'prom-client';
import { RedisStore, type KeyValueStore } from './index';

/**
 * The client-side cache of session reads on /metrics: hits are requests that needed no Redis
 * round trip; a hit rate that drops to zero means caching is off or the tracking connection is down.
 */
export function cachedReadMetrics(registry: Registry, store: KeyValueStore): void {
  if (!(store instanceof RedisStore)) return;
  new Gauge({
    name: 'session_cache_reads',
    help: 'Session liveness reads since start, by where the answer came from (hit: memory, miss: Redis)',
    labelNames: ['result'],
    registers: [registry],
    collect() {
      const stats = store.cacheStats();
      this.set({ result: 'hit' }, stats?.hits ?? 0);
      this.set({ result: 'miss' }, stats?.misses ?? 0);
    },
  });
  new Gauge({
    name: 'session_cache_entries',
    help: 'Session records held in memory, each invalidated by Redis when it changes',
    registers: [registry],
    collect() {
      this.set(store.cacheStats()?.entries ?? 0);
    },
  });
}
