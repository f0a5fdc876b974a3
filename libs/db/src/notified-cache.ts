import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { Logger } from '@trading/logging';

export interface NotifiedCacheOptions {
  /** The database whose NOTIFYs keep the cache current. */
  url: string;
  /** The channel a trigger notifies at commit, with the changed key as payload (`*`: everything changed). */
  channel: string;
  logger: Logger;
  /** Keys kept at most (oldest dropped first); 0 turns the cache off. */
  maxEntries: number;
  /** How long an entry is served at most, whatever the notifications say (a safety net, not the mechanism). */
  maxAgeMs?: number;
  /** Wait before listening again after the connection is lost. */
  retryMs?: number;
  /**
   * How often the listening session proves it still hears the channel (it notifies itself and
   * waits `probeTimeoutMs` for it), so a connection that died without a word stops the cache
   * within about their sum, not at `maxAgeMs`.
   */
  heartbeatMs?: number;
  probeTimeoutMs?: number;
}

/** The listening session's application_name. */
export const listenerName = (channel: string) => `notified-cache ${channel}`;

/** A notification the cache sends itself to prove the channel is heard; never a key. */
const PROBE_PREFIX = '~probe:';

const CHANNEL = /^[a-z_][a-z0-9_]*$/;

/**
 * A read-through cache of rows that rarely change and are read on every request, kept current
 * by PostgreSQL: a trigger NOTIFYs the changed key when its transaction commits, and every
 * instance listening drops that key. Values are served from memory only while the listening
 * session is known to hear the channel (it has notified itself through it, at start and every
 * `heartbeatMs`), so no change is missed: not while the connection is down, not behind a pooler
 * that does not pass notifications on, not on a connection that died silently. A read that races a change
 * is not kept: `changes` counts every notification, and a loaded value is stored only if no
 * notification arrived while it was being read.
 */
export class NotifiedCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  private changes = 0;
  private readonly changeListeners: Array<(key: string) => void> = [];
  private listener: Client | undefined;
  private listening = false;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  /** What `listen()` is doing, for close() to wait on. */
  private connecting: Promise<void> = Promise.resolve();

  constructor(private readonly options: NotifiedCacheOptions) {
    if (!CHANNEL.test(options.channel)) throw new Error(`not a channel name: ${options.channel}`);
  }

  /** Starts listening (in the background: reads go to the database until it is done). */
  start(): void {
    if (this.options.maxEntries > 0) this.connecting = this.listen();
  }

  /** Whether values are served from memory now (the notifications are being heard). */
  get serving(): boolean {
    return this.listening;
  }

  /** The value of `key` from memory, or from `load`; kept only if `keep` says so (e.g. not an absence, which anyone can ask for). */
  async get(key: string, load: () => Promise<V>, keep?: (value: V) => boolean): Promise<V> {
    if (!this.listening) return load();
    const hit = this.entries.get(key);
    if (hit && hit.expires > Date.now()) return hit.value;
    const before = this.changes;
    const value = await load();
    if (this.listening && this.changes === before && (keep?.(value) ?? true)) {
      this.entries.delete(key);
      this.entries.set(key, { value, expires: Date.now() + (this.options.maxAgeMs ?? 60_000) });
      if (this.entries.size > this.options.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    }
    return value;
  }

  /** Told every change heard from the channel (`*`: everything), e.g. to pass it on to services that cannot listen here. */
  onChange(listener: (key: string) => void): void {
    this.changeListeners.push(listener);
  }

  /** Drops `key` here at once (this instance's own write); the others hear of it from the trigger. */
  forget(key: string): void {
    this.changes += 1;
    this.entries.delete(key);
  }

  /** Drops everything here at once (this instance's own write, of rows whose keys it does not know). */
  forgetAll(): void {
    this.changes += 1;
    this.entries.clear();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    clearInterval(this.heartbeat);
    await this.connecting;
    this.stopServing();
    await this.listener?.end().catch(() => undefined);
  }

  private stopServing(): void {
    this.listening = false;
    this.forgetAll();
  }

  private async listen(): Promise<void> {
    // Named, so that an operator sees in pg_stat_activity which session keeps which cache current.
    const client = new Client({
      connectionString: this.options.url,
      keepAlive: true,
      application_name: listenerName(this.options.channel),
    });
    client.on('notification', (message) => {
      if (message.channel !== this.options.channel || message.payload?.startsWith(PROBE_PREFIX)) return;
      if (!message.payload || message.payload === '*') this.forgetAll();
      else this.forget(message.payload);
      for (const listener of this.changeListeners) listener(message.payload || '*');
    });
    const lost = (err?: Error) => {
      if (this.listener !== client) return;
      this.listener = undefined;
      clearInterval(this.heartbeat);
      this.stopServing();
      void client.end().catch(() => undefined); // not awaited: a dead peer may never answer
      if (this.closed) return;
      this.options.logger.warn(
        { err, channel: this.options.channel },
        'cache invalidation lost; reading from the database until it is back',
      );
      this.retry = setTimeout(() => (this.connecting = this.listen()), this.options.retryMs ?? 1000);
    };
    client.on('error', lost);
    client.on('end', () => lost());
    this.listener = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${this.options.channel}`);
      await this.probe(client);
    } catch (err) {
      return lost(err as Error);
    }
    if (this.listener !== client) return;
    if (this.closed) return void (await client.end().catch(() => undefined));
    // Whatever changed before LISTEN took effect was never heard: start from nothing.
    this.entries.clear();
    this.changes += 1;
    this.listening = true;
    this.heartbeat = setInterval(() => this.probe(client).catch(lost), this.options.heartbeatMs ?? 5000);
    this.heartbeat.unref();
  }

  /** Notifies the channel from the listening session and waits to hear it: proof that changes are being heard. */
  private probe(client: Client): Promise<void> {
    const token = `${PROBE_PREFIX}${randomUUID()}`;
    const timeoutMs = this.options.probeTimeoutMs ?? 2000;
    return new Promise<void>((resolve, reject) => {
      const done = (err?: Error) => {
        clearTimeout(timer);
        client.off('notification', heard);
        if (err) reject(err);
        else resolve();
      };
      const heard = (message: { channel: string; payload?: string }) => {
        if (message.channel === this.options.channel && message.payload === token) done();
      };
      const timer = setTimeout(
        () => done(new Error(`the channel ${this.options.channel} was not heard within ${timeoutMs} ms`)),
        timeoutMs,
      );
      client.on('notification', heard);
      client.query('SELECT pg_notify($1, $2)', [this.options.channel, token]).catch((err: Error) => done(err));
    });
  }
}
