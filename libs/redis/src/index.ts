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
  /**
   * Single-use exchange, atomically (one Redis script): when `oldKey` holds a live value, it is
   * marked spent (keeping its time to live), `value` is stored at `newKey` for `ttlSeconds`, and
   * the old value comes back as `{ spent: false }`. When `oldKey` was already spent, nothing is
   * written and its value comes back as `{ spent: true, spentAt }` (reuse detection). Missing: null.
   * Two concurrent swaps of one key: exactly one gets `spent: false`.
   */
  swap(oldKey: string, newKey: string, value: string, ttlSeconds: number): Promise<SwapResult | null>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface SwapResult {
  value: string;
  spent: boolean;
  /** When it was spent (epoch ms, the store's clock), for spent values. */
  spentAt?: number;
}

/** Spent values keep their content behind this mark, so a reuse can be traced to what it was. */
const SPENT_MARK = '\u0000spent:';

const SWAP_SCRIPT = `
local old = redis.call('GET', KEYS[1])
if not old then return false end
if string.sub(old, 1, string.len(ARGV[3])) == ARGV[3] then return old end
local ttl = redis.call('PTTL', KEYS[1])
local now = redis.call('TIME')
local spent = ARGV[3] .. (now[1] * 1000 + math.floor(now[2] / 1000)) .. ':' .. old
if ttl > 0 then redis.call('SET', KEYS[1], spent, 'PX', ttl) else redis.call('SET', KEYS[1], spent) end
redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[2])
return old`;

/** Reads a value that `swap` may have marked spent (e.g. one fetched with `get`). */
export function swapResult(raw: string | null): SwapResult | null {
  if (raw === null) return null;
  if (!raw.startsWith(SPENT_MARK)) return { value: raw, spent: false };
  const colon = raw.indexOf(':', SPENT_MARK.length);
  return { value: raw.slice(colon + 1), spent: true, spentAt: Number(raw.slice(SPENT_MARK.length, colon)) };
}

type SwapCommand = (oldKey: string, newKey: string, value: string, ttl: number, mark: string) => Promise<string | null>;

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
  async swap(oldKey: string, newKey: string, value: string, ttlSeconds: number) {
    const client = this.client as Redis & { tradingSwap?: SwapCommand };
    // defineCommand applies the client's key prefix to KEYS and caches the script by its SHA.
    if (!client.tradingSwap) client.defineCommand('tradingSwap', { numberOfKeys: 2, lua: SWAP_SCRIPT });
    return swapResult(await client.tradingSwap!(oldKey, newKey, value, Math.max(1, Math.ceil(ttlSeconds)), SPENT_MARK));
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
  async swap(oldKey: string, newKey: string, value: string, ttlSeconds: number) {
    // One synchronous block between awaits: nothing else in this process can interleave.
    const entry = this.live(oldKey);
    if (!entry || typeof entry.value !== 'string') return null;
    const old = entry.value;
    if (!old.startsWith(SPENT_MARK)) {
      this.values.set(oldKey, { value: `${SPENT_MARK}${Date.now()}:${old}`, expiresAt: entry.expiresAt });
      this.values.set(newKey, { value, expiresAt: Date.now() + Math.max(1, Math.ceil(ttlSeconds)) * 1000 });
    }
    return swapResult(old);
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
export { SealedStore } from './sealed-store';
