/** Opening and closing node-redis connections the same way everywhere. */
import {
  createClient,
  createCluster,
  createSentinel,
  type RedisClientOptions as RedisClientOptions_,
  type RedisClientType,
  type RedisClusterOptions,
  type RedisSentinelOptions,
} from 'redis';

/**
 * A node-redis connection (RESP3, the library's default), as `openRedisClient` makes it. A
 * Cluster or Sentinel client answers the same commands with the same signatures (routed by key,
 * or to the current primary), so the platform holds all three under this one type; where they
 * differ, `topologyOf` says which it is.
 */
export type RedisClient = RedisClientType;

/**
 * Where Redis is: `REDIS_URL` alone (one server), or with `REDIS_SENTINELS` and
 * `REDIS_SENTINEL_NAME` (the primary the Sentinels name, followed across failovers), or with
 * `REDIS_CLUSTER_NODES` (a Redis Cluster, found from any of those nodes). `REDIS_URL` always
 * carries the service's ACL user and password, and `rediss:` for TLS.
 */
export interface RedisSettings {
  REDIS_URL: string;
  /** host:port of each Sentinel. */
  REDIS_SENTINELS?: readonly string[];
  REDIS_SENTINEL_NAME?: string;
  /** host:port of some of the Cluster's nodes (one that answers is enough). */
  REDIS_CLUSTER_NODES?: readonly string[];
}

/** A bare URL is a single server. */
export type RedisTarget = string | RedisSettings;

export type RedisTopology = 'single' | 'sentinel' | 'cluster';

/** The primary's name when REDIS_SENTINEL_NAME is unset: Sentinel's own default. */
export const DEFAULT_SENTINEL_NAME = 'mymaster';

/** The single URL a target names (its credentials, for messages and for the nodes found through it). */
export const redisUrlOf = (target: RedisTarget) => (typeof target === 'string' ? target : target.REDIS_URL);

export function redisTopologyOf(target: RedisTarget): RedisTopology {
  if (typeof target === 'string') return 'single';
  if (target.REDIS_CLUSTER_NODES?.length) return 'cluster';
  if (target.REDIS_SENTINELS?.length) return 'sentinel';
  return 'single';
}

/** How each client was made: its topology, and what `duplicateClient` needs to make another like it. */
const made = new WeakMap<object, { target: RedisTarget; extra: ClientExtras }>();

/** Single server, Sentinel or Cluster: how `client` was made (`single` for clients made elsewhere). */
export const topologyOf = (client: object): RedisTopology => {
  const how = made.get(client);
  return how ? redisTopologyOf(how.target) : 'single';
};

export interface RedisClientOptions {
  /** Prefix for every key, so tests (or tenants) never see each other's data. */
  keyPrefix?: string;
  /**
   * `fail-fast` (commands, session reads): a command sent while the connection is down is
   * refused at once, so callers answer 503 instead of hanging. `wait` (blocking stream reads on a
   * connection of their own): it waits for the reconnection.
   */
  whileDisconnected?: 'fail-fast' | 'wait';
}

/** Between reconnection attempts: quick at first, then every 2 s, for as long as it takes. */
const reconnectDelay = (retries: number) => Math.min(100 + retries * 200, 2000);

/**
 * Connects, or throws when the first attempt fails (the caller decides: refuse to start, or fall
 * back to memory). Once connected, a lost connection is retried forever; the credentials come
 * from the URL (`redis://user:password@host:port`, one ACL user per service).
 */
export async function openRedisClient(target: RedisTarget, options: RedisClientOptions = {}): Promise<RedisClient> {
  return connectOrDestroy(
    createRedisClient(target, { keyPrefix: options.keyPrefix, disableOfflineQueue: options.whileDisconnected !== 'wait' }),
  );
}

/**
 * Another connection like `client` (same servers, credentials and key prefix), not yet
 * connected: for blocking reads, which must not hold up the commands of the first.
 */
export function duplicateClient(client: RedisClient, options: Pick<RedisClientOptions, 'whileDisconnected'>): RedisClient {
  const how = made.get(client);
  const disableOfflineQueue = options.whileDisconnected !== 'wait';
  if (!how) return client.duplicate({ disableOfflineQueue }) as RedisClient;
  return createRedisClient(how.target, { ...how.extra, disableOfflineQueue });
}

/** What a connection is made with beyond its address (the client-side cache is a Cluster's or Sentinel's pooled one there). */
type ClientExtras = Omit<RedisClientOptions_, 'url' | 'socket'>;

/**
 * A client not yet connected, as every connection of the platform is made: retried forever once
 * it has connected, the first failure ends `connect()`; errors surface through commands and /readyz.
 */
export function createRedisClient(target: RedisTarget, extra: ClientExtras = {}): RedisClient {
  const topology = redisTopologyOf(target);
  const client =
    topology === 'cluster'
      ? clusterClient(target as RedisSettings, extra)
      : topology === 'sentinel'
        ? sentinelClient(target as RedisSettings, extra)
        : singleClient(redisUrlOf(target), extra);
  client.on('error', () => undefined);
  made.set(client, { target, extra });
  return client;
}

function singleClient(url: string, extra: ClientExtras): RedisClient {
  let connected = false;
  const client = createClient({
    url,
    // Redis Enterprise's maintenance pushes: not ours to handle (and one command fewer at connect).
    maintNotifications: 'disabled',
    ...extra,
    socket: {
      connectTimeout: 2000,
      // An Error ends the attempt; made here because node-redis tests `instanceof Error` in its
      // own realm, which a socket error from Node's core is not under Jest's module sandbox.
      reconnectStrategy: (retries, cause) => (connected ? reconnectDelay(retries) : Object.assign(new Error(cause.message), { cause })),
    },
  }) as RedisClient;
  client.on('ready', () => (connected = true));
  return client;
}

/** host:port → a node-redis node address; IPv6 in brackets. */
function nodeAddress(hostPort: string): { host: string; port: number } {
  const at = hostPort.lastIndexOf(':');
  return { host: hostPort.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(hostPort.slice(at + 1)) };
}

/** The credentials, database and TLS of REDIS_URL, for the nodes a Sentinel or a Cluster names. */
function nodeOptions(url: string, extra: ClientExtras) {
  const u = new URL(url);
  const database = Number(u.pathname.slice(1) || 0);
  return {
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(database ? { database } : {}),
    maintNotifications: 'disabled' as const,
    disableOfflineQueue: extra.disableOfflineQueue,
    socket: { connectTimeout: 2000, reconnectStrategy: reconnectDelay, ...(u.protocol === 'rediss:' ? { tls: true as const } : {}) },
  };
}

function clusterClient(settings: RedisSettings, extra: ClientExtras): RedisClient {
  const { clientSideCache, keyPrefix, RESP } = extra;
  const options: RedisClusterOptions = {
    rootNodes: settings.REDIS_CLUSTER_NODES!.map((n) => ({ socket: nodeAddress(n) })),
    defaults: nodeOptions(settings.REDIS_URL, extra),
    ...(keyPrefix !== undefined ? { keyPrefix } : {}),
    ...(RESP ? { RESP } : {}),
    ...(clientSideCache ? { clientSideCache: clientSideCache as RedisClusterOptions['clientSideCache'] } : {}),
  };
  return createCluster(options) as unknown as RedisClient;
}

function sentinelClient(settings: RedisSettings, extra: ClientExtras): RedisClient {
  const { clientSideCache, keyPrefix, RESP } = extra;
  const options: RedisSentinelOptions = {
    name: settings.REDIS_SENTINEL_NAME ?? DEFAULT_SENTINEL_NAME,
    sentinelRootNodes: settings.REDIS_SENTINELS!.map(nodeAddress),
    nodeClientOptions: nodeOptions(settings.REDIS_URL, extra),
    sentinelClientOptions: { socket: { connectTimeout: 2000, reconnectStrategy: reconnectDelay } },
    ...(keyPrefix !== undefined ? { keyPrefix } : {}),
    ...(RESP ? { RESP } : {}),
    ...(clientSideCache ? { clientSideCache: clientSideCache as RedisSentinelOptions['clientSideCache'] } : {}),
  };
  return createSentinel(options) as unknown as RedisClient;
}

/** `connect()`, and on failure nothing left behind (no socket, no retry timer). */
export async function connectOrDestroy<C extends { connect(): Promise<unknown>; destroy(): unknown }>(client: C): Promise<C> {
  try {
    await client.connect();
    return client;
  } catch (err) {
    await client.destroy();
    throw err;
  }
}

/**
 * Closes gracefully (replies still owed are read first), but never waits more than a second:
 * a process told to stop must stop even when Redis went away mid-command.
 */
export async function closeRedisClient(client: { isOpen: boolean; close(): Promise<void>; destroy(): unknown }): Promise<void> {
  if (!client.isOpen) {
    await client.destroy();
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const graceful = client.close().then(
    () => true,
    () => false,
  );
  const closed = await Promise.race([graceful, new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 1000)))]);
  clearTimeout(timer);
  if (!closed) await client.destroy();
}
