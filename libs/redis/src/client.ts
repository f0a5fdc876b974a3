/** Opening and closing node-redis connections the same way everywhere. */
import { createClient, type RedisClientOptions as RedisClientOptions_, type RedisClientType } from 'redis';

/** A node-redis connection (RESP3, the library's default), as `openRedisClient` makes it. */
export type RedisClient = RedisClientType;

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
export const reconnectDelay = (retries: number) => Math.min(100 + retries * 200, 2000);

/**
 * Connects, or throws when the first attempt fails (the caller decides: refuse to start, or fall
 * back to memory). Once connected, a lost connection is retried forever; the credentials come
 * from the URL (`redis://user:password@host:port`, one ACL user per service).
 */
export async function openRedisClient(url: string, options: RedisClientOptions = {}): Promise<RedisClient> {
  return connectOrDestroy(
    createRedisClient(url, { keyPrefix: options.keyPrefix, disableOfflineQueue: options.whileDisconnected !== 'wait' }),
  );
}

/**
 * A client not yet connected, as every connection of the platform is made: retried forever once
 * it has connected, the first failure ends `connect()`; errors surface through commands and /readyz.
 */
export function createRedisClient(url: string, extra: Omit<RedisClientOptions_, 'url' | 'socket'> = {}): RedisClient {
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
  client.on('error', () => undefined);
  client.on('ready', () => (connected = true));
  return client;
}

/** `connect()`, and on failure nothing left behind (no socket, no retry timer). */
export async function connectOrDestroy<C extends { connect(): Promise<unknown>; destroy(): void }>(client: C): Promise<C> {
  try {
    await client.connect();
    return client;
  } catch (err) {
    client.destroy();
    throw err;
  }
}

/**
 * Closes gracefully (replies still owed are read first), but never waits more than a second:
 * a process told to stop must stop even when Redis went away mid-command.
 */
export async function closeRedisClient(client: { isOpen: boolean; close(): Promise<void>; destroy(): void }): Promise<void> {
  if (!client.isOpen) return client.destroy();
  let timer: NodeJS.Timeout | undefined;
  const graceful = client.close().then(
    () => true,
    () => false,
  );
  const closed = await Promise.race([graceful, new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 1000)))]);
  clearTimeout(timer);
  if (!closed) client.destroy();
}
