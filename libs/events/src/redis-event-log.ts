/** Real Redis streams. */
import Redis from 'ioredis';
import { fromFields, toFields, type DeliveredEvent, type DomainEvent, type EventLog, type RawEntries } from './event-log';

/** Real Redis streams. Blocking reads use their own connection, so they never stall other commands. */
export class RedisEventLog implements EventLog {
  readonly kind = 'redis' as const;
  /** One connection per consumer for its blocking reads. */
  private readonly blocking = new Map<string, Redis>();

  constructor(
    private readonly client: Redis,
    private readonly ownsClient = false,
  ) {}

  private connectionFor(consumer: string): Redis {
    let c = this.blocking.get(consumer);
    if (!c) {
      c = this.client.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null, keyPrefix: undefined });
      c.on('error', () => undefined);
      this.blocking.set(consumer, c);
    }
    return c;
  }

  static async connect(url: string): Promise<RedisEventLog> {
    const client = new Redis(url, {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      retryStrategy: (n) => Math.min(n * 200, 2000),
    });
    client.on('error', () => undefined);
    await client.connect();
    return new RedisEventLog(client, true);
  }

  append(stream: string, event: DomainEvent): Promise<string> {
    // Approximate trimming keeps the stream bounded; consumers run far closer to the head than this.
    return this.client.xadd(stream, 'MAXLEN', '~', '1000000', '*', ...toFields(event)) as Promise<string>;
  }

  async ensureGroup(stream: string, group: string): Promise<void> {
    try {
      await this.client.xgroup('CREATE', stream, group, '0', 'MKSTREAM');
    } catch (err) {
      if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
    }
  }

  async read(
    stream: string,
    group: string,
    consumer: string,
    options: { count: number; blockMs: number; pending: boolean },
  ): Promise<DeliveredEvent[]> {
    const args: Array<string | number> = ['GROUP', group, consumer, 'COUNT', options.count];
    if (!options.pending && options.blockMs > 0) args.push('BLOCK', options.blockMs);
    args.push('STREAMS', stream, options.pending ? '0' : '>');
    const res = (await (this.connectionFor(consumer) as any).xreadgroup(...args)) as Array<[string, RawEntries]> | null;
    const entries = res?.[0]?.[1] ?? [];
    // A pending entry trimmed away comes back with null fields: ack it so it stops coming back.
    const gone = entries.filter(([, f]) => !f).map(([id]) => id);
    if (gone.length) await this.ack(stream, group, gone);
    return entries.filter(([, f]) => f).map(([id, f]) => fromFields(id, f!));
  }

  async claimStale(stream: string, group: string, consumer: string, minIdleMs: number, count: number): Promise<DeliveredEvent[]> {
    const res = (await this.client.xautoclaim(stream, group, consumer, minIdleMs, '0-0', 'COUNT', count)) as [string, RawEntries];
    return (res?.[1] ?? []).filter(([, f]) => f).map(([id, f]) => fromFields(id, f!));
  }

  async ack(stream: string, group: string, entryIds: string[]): Promise<void> {
    if (entryIds.length) await this.client.xack(stream, group, ...entryIds);
  }

  async pendingCount(stream: string, group: string): Promise<number> {
    const res = (await this.client.xpending(stream, group)) as [number, ...unknown[]];
    return Number(res?.[0] ?? 0);
  }

  async groupLag(stream: string, group: string): Promise<number | null> {
    // XINFO GROUPS answers one flat [field, value, …] list per group; `lag` is Redis 7's.
    const groups = (await this.client.xinfo('GROUPS', stream)) as unknown[][];
    for (const fields of groups) {
      const info = new Map<unknown, unknown>();
      for (let i = 0; i + 1 < fields.length; i += 2) info.set(fields[i], fields[i + 1]);
      if (info.get('name') === group) return info.get('lag') == null ? null : Number(info.get('lag'));
    }
    return null;
  }

  async range(stream: string, count: number): Promise<DeliveredEvent[]> {
    const entries = (await this.client.xrange(stream, '-', '+', 'COUNT', count)) as RawEntries;
    return entries.filter(([, f]) => f).map(([id, f]) => fromFields(id, f!));
  }

  async after(stream: string, afterId: string, options: { count: number; blockMs: number }): Promise<DeliveredEvent[]> {
    const args: Array<string | number> = ['COUNT', options.count];
    if (options.blockMs > 0) args.push('BLOCK', options.blockMs);
    args.push('STREAMS', stream, afterId);
    // Blocking reads of one stream share a connection of their own (one per reader of this log).
    const res = (await (this.connectionFor(`after:${stream}`) as any).xread(...args)) as Array<[string, RawEntries]> | null;
    return (res?.[0]?.[1] ?? []).filter(([, f]) => f).map(([id, f]) => fromFields(id, f!));
  }

  async lastId(stream: string): Promise<string> {
    const entries = (await this.client.xrevrange(stream, '+', '-', 'COUNT', 1)) as RawEntries;
    return entries[0]?.[0] ?? '0-0';
  }

  async ping(): Promise<void> {
    await this.client.ping();
  }

  async close(): Promise<void> {
    for (const c of this.blocking.values()) c.disconnect();
    this.blocking.clear();
    if (this.ownsClient) await this.client.quit().catch(() => this.client.disconnect());
  }
}
