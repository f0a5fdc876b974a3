/** Real Redis streams. */
import { closeRedisClient, duplicateClient, openRedisClient, topologyOf, type RedisClient, type RedisTarget } from '@trading/redis';
import { compareEntryIds, fromFields, toFields, type DeliveredEvent, type DomainEvent, type EventLog } from './event-log';

/** A stream entry as node-redis answers it; `message` is null for a pending entry trimmed away. */
interface StreamMessage {
  id: string;
  message: Record<string, string> | null;
}

const delivered = (entries: readonly StreamMessage[] | null | undefined): DeliveredEvent[] =>
  (entries ?? []).flatMap(({ id, message }) => (message ? [fromFields(id, Object.entries(message).flat())] : []));

/** `toFields` as node-redis takes a message: field → value, in the same order. */
const asMessage = (event: DomainEvent): Record<string, string> => {
  const fields = toFields(event);
  const message: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) message[fields[i]!] = fields[i + 1]!;
  return message;
};

/** Real Redis streams. Blocking reads use their own connection, so they never stall other commands. */
export class RedisEventLog implements EventLog {
  readonly kind = 'redis' as const;
  /** One connection per consumer for its blocking reads. */
  private readonly blocking = new Map<string, RedisClient>();

  constructor(
    private readonly client: RedisClient,
    private readonly ownsClient = false,
  ) {}

  /**
   * A blocking reader's own connection (same server, credentials and key prefix). It waits for a
   * reconnection instead of failing: a consumer simply resumes once Redis is back.
   */
  private async connectionFor(consumer: string): Promise<RedisClient> {
    let c = this.blocking.get(consumer);
    if (!c) {
      c = duplicateClient(this.client, { whileDisconnected: 'wait' });
      c.on('error', () => undefined);
      this.blocking.set(consumer, c);
      await c.connect().catch((err: Error) => {
        this.blocking.delete(consumer);
        c!.destroy();
        throw err;
      });
    }
    return c;
  }

  /** `target`: a URL (one server), or a service's config with its Sentinels or Cluster nodes. */
  static async connect(target: RedisTarget): Promise<RedisEventLog> {
    return new RedisEventLog(await openRedisClient(target), true);
  }

  append(stream: string, event: DomainEvent, options: { maxLen?: number } = {}): Promise<string> {
    // Approximate trimming keeps the stream bounded; consumers run far closer to the head than this.
    return this.client.xAdd(stream, '*', asMessage(event), {
      TRIM: { strategy: 'MAXLEN', strategyModifier: '~', threshold: options.maxLen ?? 1_000_000 },
    }) as Promise<string>;
  }

  async ensureGroup(stream: string, group: string): Promise<void> {
    try {
      await this.client.xGroupCreate(stream, group, '0', { MKSTREAM: true });
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
    const connection = await this.connectionFor(consumer);
    const res = (await connection.xReadGroup(
      group,
      consumer,
      { key: stream, id: options.pending ? '0' : '>' },
      { COUNT: options.count, ...(!options.pending && options.blockMs > 0 ? { BLOCK: options.blockMs } : {}) },
    )) as Array<{ messages: StreamMessage[] }> | null;
    const entries = res?.[0]?.messages ?? [];
    // A pending entry trimmed away comes back without its fields: ack it so it stops coming back.
    const gone = entries.filter((e) => !e.message).map((e) => e.id);
    if (gone.length) await this.ack(stream, group, gone);
    return delivered(entries);
  }

  async claimStale(stream: string, group: string, consumer: string, minIdleMs: number, count: number): Promise<DeliveredEvent[]> {
    const res = (await this.client.xAutoClaim(stream, group, consumer, minIdleMs, '0-0', { COUNT: count })) as {
      messages: StreamMessage[];
    };
    return delivered(res?.messages);
  }

  async ack(stream: string, group: string, entryIds: string[]): Promise<void> {
    if (entryIds.length) await this.client.xAck(stream, group, entryIds);
  }

  async pendingCount(stream: string, group: string): Promise<number> {
    const res = await this.client.xPending(stream, group);
    return Number(res?.pending ?? 0);
  }

  async pendingByConsumer(stream: string, group: string): Promise<Record<string, number>> {
    const res = (await this.client.xPending(stream, group)) as { consumers?: Array<{ name: string; deliveriesCounter: number }> | null };
    return Object.fromEntries((res?.consumers ?? []).map((c) => [c.name, Number(c.deliveriesCounter)]));
  }

  async groupLag(stream: string, group: string): Promise<number | null> {
    // `lag` is Redis 7's; null where the server cannot tell.
    const groups = (await this.client.xInfoGroups(stream)) as unknown as Array<Record<string, unknown>>;
    const info = groups.find((g) => g['name'] === group);
    return info?.['lag'] == null ? null : Number(info['lag']);
  }

  async range(stream: string, count: number): Promise<DeliveredEvent[]> {
    return delivered((await this.client.xRange(stream, '-', '+', { COUNT: count })) as StreamMessage[]);
  }

  async after(stream: string, afterId: string, options: { count: number; blockMs: number }): Promise<DeliveredEvent[]> {
    // Blocking reads of one stream share a connection of their own (one per reader of this log).
    const connection = await this.connectionFor(`after:${stream}`);
    const res = (await connection.xRead(
      { key: stream, id: afterId },
      { COUNT: options.count, ...(options.blockMs > 0 ? { BLOCK: options.blockMs } : {}) },
    )) as Array<{ messages: StreamMessage[] }> | null;
    return delivered(res?.[0]?.messages);
  }

  async scanBack(
    stream: string,
    options: { before: string; after: string; count: number; mentioning?: string },
  ): Promise<{ entries: DeliveredEvent[]; read: number; oldest: string | undefined }> {
    // Replays share one connection of their own: queued there, not in front of the live reader's XREAD.
    const connection = await this.connectionFor(`scan:${stream}`);
    const newest = options.before === '+' ? '+' : `(${options.before}`;
    const page = (await connection.xRevRange(stream, newest, `(${options.after}`, { COUNT: options.count })) as StreamMessage[];
    const { mentioning } = options;
    const kept = mentioning === undefined ? page : page.filter((m) => m.message?.['payload']?.includes(mentioning));
    return { entries: delivered(kept), read: page.length, oldest: page.at(-1)?.id };
  }

  async lastId(stream: string): Promise<string> {
    const entries = (await this.client.xRevRange(stream, '+', '-', { COUNT: 1 })) as StreamMessage[];
    return entries[0]?.id ?? '0-0';
  }

  async lastIdAtOrBefore(stream: string, id: string): Promise<string> {
    const entries = (await this.client.xRevRange(stream, id, '-', { COUNT: 1 })) as StreamMessage[];
    return entries[0]?.id ?? '0-0';
  }

  async lostAfter(stream: string, afterId: string): Promise<boolean> {
    const info = (await this.client.xInfoStream(stream).catch((err: Error) => {
      if (/no such key/i.test(err.message)) return undefined; // a missing stream lost nothing
      throw err;
    })) as unknown as Map<string, unknown> | Record<string, unknown> | undefined;
    if (!info) return false;
    const field = (name: string) => (info instanceof Map ? info.get(name) : info[name]);
    // Redis 7: XDEL records the highest id it removed; trimming (XADD MAXLEN, XTRIM) does not, but
    // shows as fewer entries than were ever added, the oldest kept then being after what was cut.
    const deleted = String(field('max-deleted-entry-id') ?? '0-0');
    const removedAny = Number(field('entries-added') ?? 0) > Number(field('length') ?? 0);
    const oldestKept = (field('first-entry') as { id?: string } | null)?.id;
    return compareEntryIds(deleted, afterId) > 0 || (removedAny && !!oldestKept && compareEntryIds(oldestKept, afterId) > 0);
  }

  async holder(): Promise<string | undefined> {
    if (topologyOf(this.client) === 'cluster') return undefined;
    // run_id is new at each start; master_replid is new when a replica is promoted (and at each start).
    const info = await this.client.info('server');
    const replication = await this.client.info('replication');
    const field = (text: string, name: string) => new RegExp(`^${name}:(\\S+)`, 'm').exec(text)?.[1] ?? '';
    return `${field(info, 'run_id')}/${field(replication, 'master_replid')}`;
  }

  async ping(): Promise<void> {
    await this.client.ping();
  }

  async close(): Promise<void> {
    // Blocking reads in flight would hold a graceful close for their whole BLOCK: cut them.
    for (const c of this.blocking.values()) c.destroy();
    this.blocking.clear();
    if (this.ownsClient) await closeRedisClient(this.client);
  }
}
