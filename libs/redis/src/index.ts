import Redis from 'ioredis';

/**
 * The small slice of Redis the services use. Keeping it this narrow lets the all-in-one mode
 * run without a Redis server (MemoryStore) while every deployed instance shares real Redis.
 */
export interface KeyValueStore {
  readonly kind: 'redis' | 'memory';
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlSeconds?: number): Promise<void>;
  del(...keys: string[]): Promise<number>;
  /** Adds to a set and (re)sets the set's time to live. */
  addToSet(key: string, member: string, ttlSeconds: number): Promise<void>;
  members(key: string): Promise<string[]>;
  /** Atomically increments a counter that starts a fixed window of `windowSeconds`; returns the count and seconds left. */
  hit(key: string, windowSeconds: number): Promise<{ count: number; resetSeconds: number }>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class RedisStore implements KeyValueStore {
  readonly kind = 'redis' as const;
  constructor(readonly client: Redis) {}

  get(key: string) {
    return this.client.get(key);
  }
  async set(key: string, value: string, ttlSeconds?: number) {
    if (ttlSeconds) await this.client.set(key, value, 'EX', ttlSeconds);
    else await this.client.set(key, value);
  }
  del(...keys: string[]) {
    return keys.length ? this.client.del(...keys) : Promise.resolve(0);
  }
  async addToSet(key: string, member: string, ttlSeconds: number) {
    await this.client.multi().sadd(key, member).expire(key, ttlSeconds).exec();
  }
  members(key: string) {
    return this.client.smembers(key);
  }
  async hit(key: string, windowSeconds: number) {
    const result = await this.client.multi().incr(key).expire(key, windowSeconds, 'NX').ttl(key).exec();
    const count = Number(result?.[0]?.[1] ?? 0);
    const ttl = Number(result?.[2]?.[1] ?? windowSeconds);
    return { count, resetSeconds: ttl > 0 ? ttl : windowSeconds };
  }
  async ping() {
    await this.client.ping();
  }
  async close() {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}

/** In-process stand-in with the same semantics (TTLs included); one process only. */
export class MemoryStore implements KeyValueStore {
  readonly kind = 'memory' as const;
  private readonly values = new Map<string, { value: string | Set<string>; expiresAt?: number }>();

  private live(key: string) {
    const entry = this.values.get(key);
    if (entry?.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
      this.values.delete(key);
      return undefined;
    }
    return entry;
  }
  async get(key: string) {
    const v = this.live(key)?.value;
    return typeof v === 'string' ? v : null;
  }
  async set(key: string, value: string, ttlSeconds?: number) {
    this.values.set(key, { value, expiresAt: ttlSeconds ? Date.now() + ttlSeconds * 1000 : undefined });
  }
  async del(...keys: string[]) {
    let n = 0;
    for (const k of keys) if (this.live(k) && this.values.delete(k)) n++;
    return n;
  }
  async addToSet(key: string, member: string, ttlSeconds: number) {
    const entry = this.live(key);
    const set = entry && entry.value instanceof Set ? entry.value : new Set<string>();
    set.add(member);
    this.values.set(key, { value: set, expiresAt: Date.now() + ttlSeconds * 1000 });
  }
  async members(key: string) {
    const v = this.live(key)?.value;
    return v instanceof Set ? [...v] : [];
  }
  async hit(key: string, windowSeconds: number) {
    const entry = this.live(key);
    const count = (entry ? Number(entry.value) : 0) + 1;
    const expiresAt = entry?.expiresAt ?? Date.now() + windowSeconds * 1000;
    this.values.set(key, { value: String(count), expiresAt });
    return { count, resetSeconds: Math.max(1, Math.ceil((expiresAt - Date.now()) / 1000)) };
  }
  async ping() {
    /* in-process: always reachable */
  }
  async close() {
    this.values.clear();
  }
}

export interface ConnectOptions {
  /** Prefix for every key, so tests (or tenants) never see each other's data. */
  keyPrefix?: string;
  /** All-in-one mode only: use a MemoryStore when no Redis answers. */
  fallbackToMemory?: boolean;
  onFallback?: (reason: string) => void;
}

/**
 * Connects to Redis. Commands fail fast while disconnected (no offline queue), so callers can
 * refuse requests with a clear 503 instead of hanging: revocation checks fail closed.
 */
export async function connectStore(url: string, options: ConnectOptions = {}): Promise<KeyValueStore> {
  const client = new Redis(url, {
    keyPrefix: options.keyPrefix,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  client.on('error', () => undefined); // surfaced through command failures and /readyz
  try {
    await client.connect();
    return new RedisStore(client);
  } catch (err) {
    client.disconnect();
    if (!options.fallbackToMemory) throw new Error(`cannot reach Redis at ${redactUrl(url)}: ${(err as Error).message}`);
    options.onFallback?.(`no Redis at ${redactUrl(url)} (${(err as Error).message})`);
    return new MemoryStore();
  }
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(invalid URL)';
  }
}
