/**
 * Reads answered from this process's memory while Redis guarantees they are still current
 * (RESP3 client-side caching): for values read on every request and rarely changed, such as
 * session liveness at the edges.
 */
import { BasicClientSideCache, BasicPooledClientSideCache } from 'redis';
import { closeRedisClient, connectOrDestroy, createRedisClient, redisTopologyOf, type RedisClient, type RedisTarget } from './client';

export interface TrackedReadOptions {
  /** At most this many values are remembered (least recently used go first). */
  maxEntries: number;
  /** No value is remembered longer than this, invalidation or not (a bound should one ever be lost). */
  ttlMs: number;
  keyPrefix?: string;
}

/**
 * A connection of its own with `CLIENT TRACKING ON`: Redis remembers which keys it read and
 * pushes an invalidation on this connection the moment any client changes or deletes one of
 * them (or it expires), so every instance forgets a revoked session at once. While this
 * connection is down nothing is answered from memory (invalidations may be missed then): the
 * memory is emptied and reads go to `fallback`, the store's ordinary connection.
 */
export class TrackedReads {
  private constructor(
    private readonly client: RedisClient,
    private readonly cache: BasicClientSideCache,
    private readonly fallback: RedisClient,
    /** The cache knows keys as Redis does: with the prefix. */
    private readonly keyPrefix = '',
  ) {}

  static async open(target: RedisTarget, fallback: RedisClient, options: TrackedReadOptions): Promise<TrackedReads> {
    const settings = { maxEntries: options.maxEntries, ttl: options.ttlMs, evictPolicy: 'LRU' as const };
    // A Sentinel's or Cluster's connections share one pooled cache, invalidated by each.
    const cache = redisTopologyOf(target) === 'single' ? new BasicClientSideCache(settings) : new BasicPooledClientSideCache(settings);
    const client = trackingClient(target, cache, options.keyPrefix);
    // node-redis empties the cache when the socket errors; empty it on every state change too, so
    // no entry read before a gap survives it, whatever ended the connection (a Cluster reports its
    // nodes' changes, a Sentinel a change of primary).
    for (const event of [...STATE_CHANGES, ...NODE_STATE_CHANGES]) client.on(event, () => cache.clear(false));
    await connectOrDestroy(client);
    return new TrackedReads(client, cache, fallback, options.keyPrefix);
  }

  async get(key: string): Promise<string | null> {
    if (!this.client.isReady) return this.fallback.get(key);
    // An invalidation and the request that must see it can become readable in the same poll
    // phase; if the request's socket is handled first, the push still sits unread in this
    // connection's socket. setImmediate runs in the check phase, after every I/O callback of that
    // poll phase, so a push that had arrived is applied before the cache answers (about 1 µs).
    await new Promise(setImmediate);
    if (!this.client.isReady) return this.fallback.get(key);
    // Lost mid-read: the ordinary connection may still answer.
    return this.client.get(key).catch(() => this.fallback.get(key));
  }

  /**
   * Drops what this process remembers of `keys`, at once: called after this process changed them
   * itself, so its own next read (auth and the edges share one store in the all-in-one) never
   * waits on the invalidation push Redis sends it on another connection.
   */
  forget(keys: readonly string[]): void {
    for (const key of keys) this.cache.invalidate(this.keyPrefix + key);
  }

  /** Hits, misses and evictions since the start (hits cost no round trip). */
  stats() {
    const s = this.cache.stats();
    return { hits: s.hitCount, misses: s.missCount, evictions: s.evictionCount, entries: this.cache.size() };
  }

  close(): Promise<void> {
    return closeRedisClient(this.client);
  }
}

const STATE_CHANGES = ['error', 'end', 'reconnecting', 'ready'] as const;
const NODE_STATE_CHANGES = [
  'node-error',
  'node-disconnect',
  'node-reconnecting',
  'node-ready',
  'disconnect',
  'topology-change',
  'client-error',
];

function trackingClient(target: RedisTarget, cache: BasicClientSideCache, keyPrefix?: string): RedisClient {
  // RESP3 is what client-side caching needs; never queue: a read while disconnected goes to the fallback connection.
  return createRedisClient(target, { keyPrefix, RESP: 3, clientSideCache: cache, disableOfflineQueue: true });
}
