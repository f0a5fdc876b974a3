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
}

const CHANNEL = /^[a-z_][a-z0-9_]*$/;

/**
 * A read-through cache of rows that rarely change and are read on every request, kept current
 * by PostgreSQL: a trigger NOTIFYs the changed key when its transaction commits, and every
 * instance listening drops that key. While the listening connection is down (and until it is
 * back) nothing is served from memory, so no change can be missed. A read that races a change
 * is not kept: `changes` counts every notification, and a loaded value is stored only if no
 * notification arrived while it was being read.
 */
export class NotifiedCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  private changes = 0;
  private listener: Client | undefined;
  private listening = false;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
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

  async get(key: string, load: () => Promise<V>): Promise<V> {
    if (!this.listening) return load();
    const hit = this.entries.get(key);
    if (hit && hit.expires > Date.now()) return hit.value;
    const before = this.changes;
    const value = await load();
    if (this.listening && this.changes === before) {
      this.entries.delete(key);
      this.entries.set(key, { value, expires: Date.now() + (this.options.maxAgeMs ?? 60_000) });
      if (this.entries.size > this.options.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    }
    return value;
  }

  /** Drops `key` here at once (this instance's own write); the others hear of it from the trigger. */
  forget(key: string): void {
    this.changes += 1;
    this.entries.delete(key);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    await this.connecting;
    this.stopServing();
    await this.listener?.end().catch(() => undefined);
  }

  private stopServing(): void {
    this.listening = false;
    this.changes += 1;
    this.entries.clear();
  }

  private async listen(): Promise<void> {
    const client = new Client({ connectionString: this.options.url });
    client.on('notification', (message) => {
      if (message.channel !== this.options.channel) return;
      if (!message.payload || message.payload === '*') {
        this.changes += 1;
        this.entries.clear();
      } else this.forget(message.payload);
    });
    const lost = (err?: Error) => {
      if (this.listener !== client) return;
      this.listener = undefined;
      this.stopServing();
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
    } catch (err) {
      lost(err as Error);
      await client.end().catch(() => undefined);
      return;
    }
    if (this.listener !== client) return;
    if (this.closed) return void (await client.end().catch(() => undefined));
    // Whatever changed before LISTEN took effect was never heard: start from nothing.
    this.entries.clear();
    this.changes += 1;
    this.listening = true;
  }
}
