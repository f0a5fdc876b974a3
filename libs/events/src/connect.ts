/** Choosing the event log: Redis, or the in-process stand-in. */
import type { RedisTarget } from '@trading/redis';
import type { EventLog } from './event-log';
import { MemoryEventLog } from './memory-event-log';
import { RedisEventLog } from './redis-event-log';

/** Redis at `target` (a URL, or a service's config with its Sentinels or Cluster nodes); or, when `fallbackToMemory` and none answers, the in-process stand-in. */
export async function connectEventLog(
  target: RedisTarget,
  options: { fallbackToMemory?: boolean; onFallback?: (reason: string) => void } = {},
): Promise<EventLog> {
  try {
    return await RedisEventLog.connect(target);
  } catch (err) {
    if (!options.fallbackToMemory) throw new Error(`cannot reach Redis for events: ${(err as Error).message}`);
    options.onFallback?.((err as Error).message);
    return new MemoryEventLog();
  }
}
