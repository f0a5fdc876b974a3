import { createHash } from 'node:crypto';
import { errors } from '@trading/errors';
import type { RedisSentinelType } from 'redis';
import {
  closeRedisClient,
  DEFAULT_SENTINEL_NAME,
  openRedisClient,
  redisUrlOf,
  topologyOf,
  type RedisClient,
  type RedisSettings,
  type RedisTarget,
} from './client';
import { TrackedReads } from './tracked-reads';

/**
 * The small slice of Redis the services use. Keeping it this narrow lets the all-in-one mode
 * run without a Redis server (MemoryStore) while every deployed instance shares real Redis.
 */
export interface KeyValueStore {
  readonly kind: 'redis' | 'memory';
  get(key: string): Promise<string | null>;
  /**
   * `get` for values read on every request and seldom changed (session liveness at the edges):
   * answered from this process's memory when the store keeps a client-side cache, which Redis
   * invalidates the moment the key changes anywhere. The same answer as `get`, fewer round trips.
   */
  getCached(key: string): Promise<string | null>;
  set(key: string, value: string, ttlSeconds?: number): Promise<void>;
  del(...keys: string[]): Promise<number>;
  /**
   * `del` for a revocation (a session ended, a token withdrawn), which must survive losing the
   * Redis primary: behind Sentinel it returns only once a replica holds it too, and fails (503,
   * try again) when none confirms in time. Elsewhere the same as `del`.
   */
  revoke(...keys: string[]): Promise<number>;
  /**
   * Stores `value` for `ttlSeconds` only when `key` holds nothing (Redis SET NX EX); true when it
   * was stored, false when the key existed. One-time markers: a DPoP proof's `jti` (replay cache).
   */
  setIfAbsent(key: string, value: string, ttlSeconds: number): Promise<boolean>;
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
   * Two concurrent swaps of one key: exactly one gets `spent: false`. `also`: more writes made in
   * the same atomic step, only by the swap that spends the old value.
   */
  swap(oldKey: string, newKey: string, value: string, ttlSeconds: number, also?: SwapWrites): Promise<SwapResult | null>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Writes that travel with a swap (a refresh's new session and its retry answer): one round trip,
 * and none of them exists unless the old value was spent by this swap.
 */
export interface SwapWrites {
  /** SET key value EX ttl. `sealed`: a SealedStore seals this value for its key (others pass as given, for readers through a plain store). */
  values?: Array<{ key: string; value: string; ttlSeconds: number; sealed?: boolean }>;
  /** SADD key member, then EXPIRE key ttl (the set's time to live). */
  members?: Array<{ key: string; member: string; ttlSeconds: number }>;
}

export interface SwapResult {
  value: string;
  spent: boolean;
  /** When it was spent (epoch ms, the store's clock), for spent values. */
  spentAt?: number;
}

/** How long a delete behind Sentinel waits for a replica to have it. */
const REPLICA_ACK_MS = 1000;

/** Spent values keep their content behind this mark, so a reuse can be traced to what it was. */
const SPENT_MARK = '\u0000spent:';

/**
 * KEYS: the old key, the new one, then `also`'s values and sets. With the old key alone (on a
 * Cluster, where the others live in other slots) it only spends: the writes are then the caller's.
 */
const SWAP_SCRIPT = `
local old = redis.call('GET', KEYS[1])
if not old then return false end
if string.sub(old, 1, string.len(ARGV[3])) == ARGV[3] then return old end
local ttl = redis.call('PTTL', KEYS[1])
local now = redis.call('TIME')
local spent = ARGV[3] .. (now[1] * 1000 + math.floor(now[2] / 1000)) .. ':' .. old
if ttl > 0 then redis.call('SET', KEYS[1], spent, 'PX', ttl) else redis.call('SET', KEYS[1], spent) end
if #KEYS == 1 then return old end
redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[2])
local values, members = tonumber(ARGV[4]), tonumber(ARGV[5])
for i = 1, values do redis.call('SET', KEYS[2 + i], ARGV[4 + 2 * i], 'EX', ARGV[5 + 2 * i]) end
for i = 1, members do
  local key = KEYS[2 + values + i]
  redis.call('SADD', key, ARGV[4 + 2 * values + 2 * i])
  redis.call('EXPIRE', key, ARGV[5 + 2 * values + 2 * i])
end
return old`;

const seconds = (ttlSeconds: number) => String(Math.max(1, Math.ceil(ttlSeconds)));

/** Reads a value that `swap` may have marked spent (e.g. one fetched with `get`). */
export function swapResult(raw: string | null): SwapResult | null {
  if (raw === null) return null;
  if (!raw.startsWith(SPENT_MARK)) return { value: raw, spent: false };
  const colon = raw.indexOf(':', SPENT_MARK.length);
  return { value: raw.slice(colon + 1), spent: true, spentAt: Number(raw.slice(SPENT_MARK.length, colon)) };
}

const SWAP_SHA = createHash('sha1').update(SWAP_SCRIPT).digest('hex');

export class RedisStore implements KeyValueStore {
  readonly kind = 'redis' as const;
  /**
   * A Redis Cluster refuses a script or MULTI over keys of different slots (CROSSSLOT): there,
   * operations over keys of different users, apps or tokens run as one single-slot step each.
   */
  readonly cluster: boolean;
  /** Behind Sentinel: a primary whose acknowledged writes a failover can lose. */
  private readonly replicated: boolean;
  constructor(
    /** The store's connection (fails fast while disconnected); rate limiting and the all-in-one event log share it. */
    readonly client: RedisClient,
    private readonly tracked?: TrackedReads,
  ) {
    this.cluster = topologyOf(client) === 'cluster';
    this.replicated = topologyOf(client) === 'sentinel';
  }

  get(key: string) {
    return this.client.get(key);
  }
  getCached(key: string) {
    return this.tracked ? this.tracked.get(key) : this.client.get(key);
  }
  /**
   * Drops what this process remembers of `keys` for `getCached`, at once: for a writer that
   * changed them by another way than this store's own methods (a rate limiter's script).
   */
  forgetCached(keys: readonly string[]): void {
    this.tracked?.forget(keys);
  }
  /** The client-side cache's counters, when this store keeps one. */
  cacheStats() {
    return this.tracked?.stats();
  }
  async set(key: string, value: string, ttlSeconds?: number) {
    if (ttlSeconds) await this.client.set(key, value, { expiration: { type: 'EX', value: ttlSeconds } });
    else await this.client.set(key, value);
    this.tracked?.forget([key]);
  }
  async setIfAbsent(key: string, value: string, ttlSeconds: number) {
    const reply = await this.client.set(key, value, {
      condition: 'NX',
      expiration: { type: 'EX', value: Math.max(1, Math.ceil(ttlSeconds)) },
    });
    this.tracked?.forget([key]);
    return reply === 'OK';
  }
  async del(...keys: string[]) {
    if (!keys.length) return 0;
    // A Cluster refuses one DEL over keys of different slots: one each there.
    const deleted = this.cluster
      ? (await Promise.all(keys.map((key) => this.client.del(key)))).reduce((a, b) => a + b, 0)
      : await this.client.del(keys);
    // Once this resolves, no reader of this process answers from memory for these keys (a revocation
    // here is refused here at once; other processes learn it from Redis's invalidation push).
    this.tracked?.forget(keys);
    return deleted;
  }
  /**
   * Redis replicates asynchronously: a delete the primary acknowledged can still be lost when it
   * dies and Sentinel promotes a replica, and a revoked session would live again. Behind
   * Sentinel a revocation therefore returns only once a replica has it too (WAIT on the same
   * connection); without that acknowledgement in time it fails (503, try again), never reporting
   * done what a failover could undo. Only revocations wait: sign-ins and one-time markers keep
   * working while the primary has no replica.
   */
  async revoke(...keys: string[]): Promise<number> {
    if (!keys.length || !this.replicated) return this.del(...keys);
    const sentinel = this.client as unknown as RedisSentinelType;
    const deleted = await sentinel.use(async (connection) => {
      const n = await connection.del(keys);
      if ((await connection.wait(1, REPLICA_ACK_MS)) < 1)
        throw errors.unavailable('The revocation could not be confirmed on a Redis replica; retry shortly');
      return n;
    });
    this.tracked?.forget(keys);
    return deleted;
  }
  async addToSet(key: string, member: string, ttlSeconds: number) {
    await this.client.multi().sAdd(key, member).expire(key, ttlSeconds).exec();
  }
  members(key: string) {
    return this.client.sMembers(key);
  }
  async hit(key: string, windowSeconds: number) {
    const [count, , ttl] = (await this.client.multi().incr(key).expire(key, windowSeconds, 'NX').ttl(key).exec()) as unknown as number[];
    return { count: Number(count ?? 0), resetSeconds: Number(ttl) > 0 ? Number(ttl) : windowSeconds };
  }
  async swap(oldKey: string, newKey: string, value: string, ttlSeconds: number, also: SwapWrites = {}) {
    const values = also.values ?? [];
    const members = also.members ?? [];
    if (this.cluster) return this.swapInSteps(oldKey, newKey, value, ttlSeconds, values, members);
    const args = {
      keys: [oldKey, newKey, ...values.map((v) => v.key), ...members.map((m) => m.key)],
      arguments: [
        value,
        seconds(ttlSeconds),
        SPENT_MARK,
        String(values.length),
        String(members.length),
        ...values.flatMap((v) => [v.value, seconds(v.ttlSeconds)]),
        ...members.flatMap((m) => [m.member, seconds(m.ttlSeconds)]),
      ],
    };
    const raw = await this.script(args);
    this.tracked?.forget(values.map((v) => v.key));
    return swapResult(raw as string | null);
  }

  /**
   * The swap on a Cluster: the old key is spent alone (atomic in its slot, so of two concurrent
   * swaps exactly one wins), and only the winner then writes the new key and `also`, each in its
   * own slot. Nobody holds the new key before the swap returns, so nothing can read the gap; a
   * loser writes nothing, as in one script. Should the winner die between the steps, the old
   * value is spent with no successor: as safe as a lost reply, never a second pair.
   */
  private async swapInSteps(
    oldKey: string,
    newKey: string,
    value: string,
    ttlSeconds: number,
    values: NonNullable<SwapWrites['values']>,
    members: NonNullable<SwapWrites['members']>,
  ) {
    const raw = (await this.script({ keys: [oldKey], arguments: [value, seconds(ttlSeconds), SPENT_MARK, '0', '0'] })) as string | null;
    const result = swapResult(raw);
    if (!result || result.spent) return result;
    await Promise.all([
      this.client.set(newKey, value, { expiration: { type: 'EX', value: Number(seconds(ttlSeconds)) } }),
      ...values.map((v) => this.client.set(v.key, v.value, { expiration: { type: 'EX', value: Number(seconds(v.ttlSeconds)) } })),
      ...members.map((m) =>
        this.client
          .multi()
          .sAdd(m.key, m.member)
          .expire(m.key, Number(seconds(m.ttlSeconds)))
          .exec(),
      ),
    ]);
    this.tracked?.forget(values.map((v) => v.key));
    return result;
  }

  /** The swap script by its SHA (the key prefix applies to its keys); the first call after a Redis restart loads it. */
  private script(args: { keys: string[]; arguments: string[] }) {
    return this.client.evalSha(SWAP_SHA, args).catch((err: Error) => {
      if (!err.message.startsWith('NOSCRIPT')) throw err;
      return this.client.eval(SWAP_SCRIPT, args);
    });
  }
  async ping() {
    await this.client.ping();
  }
  async close() {
    await this.tracked?.close();
    await closeRedisClient(this.client);
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
  getCached(key: string) {
    return this.get(key);
  }
  async set(key: string, value: string, ttlSeconds?: number) {
    this.values.set(key, { value, expiresAt: ttlSeconds ? Date.now() + ttlSeconds * 1000 : undefined });
  }
  async setIfAbsent(key: string, value: string, ttlSeconds: number) {
    if (this.live(key)) return false;
    this.values.set(key, { value, expiresAt: Date.now() + Math.max(1, Math.ceil(ttlSeconds)) * 1000 });
    return true;
  }
  async del(...keys: string[]) {
    let n = 0;
    for (const k of keys) if (this.live(k) && this.values.delete(k)) n++;
    return n;
  }
  revoke(...keys: string[]) {
    return this.del(...keys);
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
  async swap(oldKey: string, newKey: string, value: string, ttlSeconds: number, also: SwapWrites = {}) {
    // One synchronous block between awaits: nothing else in this process can interleave.
    const entry = this.live(oldKey);
    if (!entry || typeof entry.value !== 'string') return null;
    const old = entry.value;
    if (!old.startsWith(SPENT_MARK)) {
      this.values.set(oldKey, { value: `${SPENT_MARK}${Date.now()}:${old}`, expiresAt: entry.expiresAt });
      this.values.set(newKey, { value, expiresAt: Date.now() + Math.max(1, Math.ceil(ttlSeconds)) * 1000 });
      // set and addToSet never await: they are done when they return, inside this block.
      for (const v of also.values ?? []) void this.set(v.key, v.value, Math.max(1, Math.ceil(v.ttlSeconds)));
      for (const m of also.members ?? []) void this.addToSet(m.key, m.member, m.ttlSeconds);
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
  /**
   * Keep a client-side cache for `getCached` (the edges' session reads) on a tracking
   * connection of its own, of at most `maxEntries` values; 0 or absent: none.
   */
  cachedReads?: { maxEntries: number };
}

/** A remembered value is dropped after this long even if no invalidation came (it always should). */
const CACHED_READ_TTL_MS = 60_000;

/**
 * Connects to Redis. Commands fail fast while disconnected (no offline queue), so callers can
 * refuse requests with a clear 503 instead of hanging: revocation checks fail closed.
 */
/** The store of the edges (facade, gateway) and auth: reads made on every request cached as SESSION_CACHE_ENTRIES says. */
export const connectEdgeStore = (config: RedisSettings & { SESSION_CACHE_ENTRIES: number }): Promise<KeyValueStore> =>
  connectStore(config, { cachedReads: { maxEntries: config.SESSION_CACHE_ENTRIES } });

/** `target`: a URL (one server), or a service's config with its Sentinels or Cluster nodes. */
export async function connectStore(target: RedisTarget, options: ConnectOptions = {}): Promise<KeyValueStore> {
  let client: RedisClient | undefined;
  const url = redisUrlOf(target);
  try {
    client = await openRedisClient(target, { keyPrefix: options.keyPrefix });
    const maxEntries = options.cachedReads?.maxEntries ?? 0;
    const tracked =
      maxEntries > 0
        ? await TrackedReads.open(target, client, { maxEntries, ttlMs: CACHED_READ_TTL_MS, keyPrefix: options.keyPrefix })
        : undefined;
    return new RedisStore(client, tracked);
  } catch (err) {
    if (client) await closeRedisClient(client);
    const where = typeof target === 'string' ? redactUrl(url) : describeTarget(target);
    if (!options.fallbackToMemory) throw new Error(`cannot reach Redis at ${where}: ${(err as Error).message}`);
    options.onFallback?.(`no Redis at ${where} (${(err as Error).message})`);
    return new MemoryStore();
  }
}

/** Where a target points, for messages: its nodes, never its password. */
function describeTarget(settings: RedisSettings): string {
  if (settings.REDIS_CLUSTER_NODES?.length) return `the Cluster nodes ${settings.REDIS_CLUSTER_NODES.join(', ')}`;
  if (settings.REDIS_SENTINELS?.length)
    return `primary "${settings.REDIS_SENTINEL_NAME ?? DEFAULT_SENTINEL_NAME}" of the Sentinels ${settings.REDIS_SENTINELS.join(', ')}`;
  return redactUrl(settings.REDIS_URL);
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
export {
  closeRedisClient,
  duplicateClient,
  openRedisClient,
  topologyOf,
  type RedisClient,
  type RedisSettings,
  type RedisTarget,
} from './client';
export { cachedReadMetrics } from './metrics';
