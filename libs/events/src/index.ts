import { hostname } from 'node:os';
import Redis from 'ioredis';
import type { Logger } from '@trading/logging';

/** One event as it travels: a stable id (consumers deduplicate on it), a type and a JSON payload. */
export interface DomainEvent {
  eventId: string;
  type: string;
  payload: Record<string, unknown>;
  /** The producer's signature over id, type and payload (see signature.ts); consumers check it before anything is applied. */
  signature?: string;
}

/** An event as a consumer group delivers it: `entryId` is the stream's own id, what `ack` takes. */
export interface DeliveredEvent extends DomainEvent {
  entryId: string;
  /** The payload exactly as it travelled (what the signature covers), when the log keeps it as text. */
  payloadJson?: string;
}

/**
 * The slice of Redis streams the services use (XADD, XGROUP CREATE, XREADGROUP, XAUTOCLAIM,
 * XACK). Delivery is at least once: an entry stays pending for its consumer until acked, is
 * read again by that consumer after a restart, and can be claimed by another consumer of the
 * group once it has been idle long enough. Consumers make the effect exactly once by
 * deduplicating on `eventId` in the same transaction as the effect.
 */
export interface EventLog {
  readonly kind: 'redis' | 'memory';
  append(stream: string, event: DomainEvent): Promise<string>;
  ensureGroup(stream: string, group: string): Promise<void>;
  /** `pending`: this consumer's delivered-but-unacked entries; otherwise new entries (waiting up to `blockMs`). */
  read(stream: string, group: string, consumer: string, options: { count: number; blockMs: number; pending: boolean }): Promise<DeliveredEvent[]>;
  /** Takes over entries another consumer left unacked for at least `minIdleMs` (it crashed). */
  claimStale(stream: string, group: string, consumer: string, minIdleMs: number, count: number): Promise<DeliveredEvent[]>;
  ack(stream: string, group: string, entryIds: string[]): Promise<void>;
  /** Entries delivered to the group and not yet acked. */
  pendingCount(stream: string, group: string): Promise<number>;
  /** Entries of a stream, oldest first (for operators: dead letters). */
  range(stream: string, count: number): Promise<DeliveredEvent[]>;
  /**
   * Entries after `afterId` ('0-0': from the start), oldest first, waiting up to `blockMs` when
   * there are none yet. No consumer group: every reader sees every entry (live feeds to clients).
   */
  after(stream: string, afterId: string, options: { count: number; blockMs: number }): Promise<DeliveredEvent[]>;
  /** The newest entry's id; '0-0' for an empty or missing stream. */
  lastId(stream: string): Promise<string>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

const toFields = (e: DomainEvent) => ['eventId', e.eventId, 'type', e.type, 'payload', JSON.stringify(e.payload), ...(e.signature ? ['signature', e.signature] : [])];

function fromFields(entryId: string, fields: string[]): DeliveredEvent {
  const map: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) map[fields[i]!] = fields[i + 1]!;
  const payloadJson = map['payload'] ?? '{}';
  let payload: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(payloadJson);
    payload = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    payload = {}; // not JSON: the consumer's checks refuse it (its signature cannot match either)
  }
  return { entryId, eventId: map['eventId'] ?? '', type: map['type'] ?? '', payload, payloadJson, signature: map['signature'] };
}

type RawEntries = Array<[string, string[] | null]>;

/** Orders stream entry ids (`<ms>-<seq>`) as Redis does; negative when `a` comes first. */
export function compareEntryIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am - bm || as - bs;
}

/** A stream entry id as a client may send it back (Last-Event-ID). */
export const isEntryId = (value: unknown): value is string => typeof value === 'string' && /^\d{1,15}-\d{1,15}$/.test(value);

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
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2000, retryStrategy: (n) => Math.min(n * 200, 2000) });
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

  async read(stream: string, group: string, consumer: string, options: { count: number; blockMs: number; pending: boolean }): Promise<DeliveredEvent[]> {
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

interface MemoryGroup {
  /** Index of the next entry never delivered to this group. */
  next: number;
  pending: Map<string, { consumer: string; deliveredAt: number }>;
}

/**
 * In-process stand-in with the same semantics, for the all-in-one mode without Redis: every
 * app of the process shares one instance. Entries live as long as the process.
 */
export class MemoryEventLog implements EventLog {
  readonly kind = 'memory' as const;
  private readonly streams = new Map<string, { entries: DeliveredEvent[]; groups: Map<string, MemoryGroup>; waiters: Set<() => void> }>();
  private seq = 0;

  private stream(name: string) {
    let s = this.streams.get(name);
    if (!s) this.streams.set(name, (s = { entries: [], groups: new Map(), waiters: new Set() }));
    return s;
  }

  private group(stream: string, group: string): MemoryGroup {
    const g = this.stream(stream).groups.get(group);
    if (!g) throw new Error(`NOGROUP ${group} on ${stream}`);
    return g;
  }

  async append(stream: string, event: DomainEvent): Promise<string> {
    const s = this.stream(stream);
    const entryId = `${Date.now()}-${++this.seq}`;
    s.entries.push({ ...event, payload: JSON.parse(JSON.stringify(event.payload)) as Record<string, unknown>, entryId });
    for (const wake of [...s.waiters]) wake();
    return entryId;
  }

  async ensureGroup(stream: string, group: string): Promise<void> {
    const s = this.stream(stream);
    if (!s.groups.has(group)) s.groups.set(group, { next: 0, pending: new Map() });
  }

  async read(stream: string, group: string, consumer: string, options: { count: number; blockMs: number; pending: boolean }): Promise<DeliveredEvent[]> {
    const s = this.stream(stream);
    const g = this.group(stream, group);
    if (options.pending) {
      const mine = s.entries.filter((e) => g.pending.get(e.entryId)?.consumer === consumer).slice(0, options.count);
      for (const e of mine) g.pending.set(e.entryId, { consumer, deliveredAt: Date.now() });
      return mine;
    }
    if (g.next >= s.entries.length && options.blockMs > 0) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          s.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, options.blockMs);
        s.waiters.add(wake);
      });
    }
    const batch = s.entries.slice(g.next, g.next + options.count);
    g.next += batch.length;
    for (const e of batch) g.pending.set(e.entryId, { consumer, deliveredAt: Date.now() });
    return batch;
  }

  async claimStale(stream: string, group: string, consumer: string, minIdleMs: number, count: number): Promise<DeliveredEvent[]> {
    const s = this.stream(stream);
    const g = this.group(stream, group);
    const now = Date.now();
    const stale = s.entries.filter((e) => {
      const p = g.pending.get(e.entryId);
      return p && p.consumer !== consumer && now - p.deliveredAt >= minIdleMs;
    });
    const claimed = stale.slice(0, count);
    for (const e of claimed) g.pending.set(e.entryId, { consumer, deliveredAt: now });
    return claimed;
  }

  async ack(stream: string, group: string, entryIds: string[]): Promise<void> {
    const g = this.group(stream, group);
    for (const id of entryIds) g.pending.delete(id);
  }

  async pendingCount(stream: string, group: string): Promise<number> {
    return this.group(stream, group).pending.size;
  }

  async range(stream: string, count: number): Promise<DeliveredEvent[]> {
    return this.stream(stream).entries.slice(0, count);
  }

  async after(stream: string, afterId: string, options: { count: number; blockMs: number }): Promise<DeliveredEvent[]> {
    const s = this.stream(stream);
    const newer = () => s.entries.filter((e) => compareEntryIds(e.entryId, afterId) > 0).slice(0, options.count);
    if (!newer().length && options.blockMs > 0) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          s.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, options.blockMs);
        s.waiters.add(wake);
      });
    }
    return newer();
  }

  async lastId(stream: string): Promise<string> {
    return this.stream(stream).entries.at(-1)?.entryId ?? '0-0';
  }

  async ping(): Promise<void> {
    /* in-process: always reachable */
  }

  async close(): Promise<void> {
    for (const s of this.streams.values()) for (const wake of [...s.waiters]) wake();
  }
}

/** Redis at `url`; or, when `fallbackToMemory` and none answers, the in-process stand-in. */
export async function connectEventLog(url: string, options: { fallbackToMemory?: boolean; onFallback?: (reason: string) => void } = {}): Promise<EventLog> {
  try {
    return await RedisEventLog.connect(url);
  } catch (err) {
    if (!options.fallbackToMemory) throw new Error(`cannot reach Redis for events: ${(err as Error).message}`);
    options.onFallback?.((err as Error).message);
    return new MemoryEventLog();
  }
}

export interface ConsumerOptions {
  log: EventLog;
  stream: string;
  group: string;
  /** Defaults to `<group>@<host>:<pid>`, so an in-process restart finds its own pending entries at once. */
  consumer?: string;
  logger: Logger;
  /**
   * Applies one event. It must be idempotent by `eventId` and commit before resolving: the
   * entry is acked only afterwards, so a crash in between re-delivers an event the handler then skips.
   */
  handle(event: DeliveredEvent): Promise<void>;
  /**
   * Checked before `handle`: the reason an event must never be applied (bad signature, not the
   * contract's shape), or null. A refused event goes to `<stream>:dead-letter` with the reason
   * and is acked, so it neither blocks the stream nor is ever booked.
   */
  refuse?(event: DeliveredEvent): string | null;
  /** Told of every dead-lettered event (metrics). */
  onDeadLetter?(reason: string): void;
  batchSize?: number;
  blockMs?: number;
  /** Entries another consumer left unacked this long are taken over (default 30 s). */
  claimIdleMs?: number;
}

/** Where refused events of `stream` are kept. */
export const deadLetterStream = (stream: string) => `${stream}:dead-letter`;

/** The dead letters of `stream`, oldest first (npm run dead-letters -- list). */
export async function listDeadLetters(log: EventLog, stream: string): Promise<DeliveredEvent[]> {
  return log.range(deadLetterStream(stream), 1000);
}

/**
 * Puts a refused event back on `stream` exactly as it was (npm run dead-letters -- replay): its
 * signature and the contract are checked again, so a forgery comes straight back.
 * Returns the new entry id.
 */
export async function replayDeadLetter(log: EventLog, stream: string, entryId: string): Promise<string> {
  const dead = (await listDeadLetters(log, stream)).find((d) => d.entryId === entryId);
  if (!dead) throw new Error(`no dead letter ${entryId} on ${deadLetterStream(stream)}`);
  const { type, payload, signature } = dead.payload as { type: string; payload: string; signature: string | null };
  let original: Record<string, unknown>;
  try {
    original = JSON.parse(payload) as Record<string, unknown>;
  } catch {
    throw new Error(`dead letter ${entryId} does not hold a JSON payload; it cannot be replayed`);
  }
  return log.append(stream, { eventId: dead.eventId, type, payload: original, ...(signature ? { signature } : {}) });
}



export * from './signature';
export * from './settlement-contract';

/** A consumer-group worker: pending first, then stale entries of dead consumers, then new ones. */
export class StreamConsumer {
  private running = false;
  private aborted = false;
  private loop: Promise<void> | undefined;
  readonly consumer: string;

  constructor(private readonly options: ConsumerOptions) {
    this.consumer = options.consumer ?? `${options.group}@${hostname()}:${process.pid}`;
  }

  async start(): Promise<void> {
    await this.options.log.ensureGroup(this.options.stream, this.options.group);
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  /**
   * Stops the way a crash would, for crash tests: returns at once, acks nothing more (the event
   * being handled stays pending, whether or not its transaction commits) and handles nothing
   * else it has read. The loop ends by itself within a turn; `stop()` waits for that.
   */
  abort(): void {
    this.aborted = true;
    this.running = false;
  }

  /** Keeps a refused event, with why and who refused it, where an operator can look at it. */
  private async deadLetter(event: DeliveredEvent, reason: string): Promise<void> {
    const { log, stream, group, logger } = this.options;
    logger.error({ stream, group, entryId: event.entryId, eventId: event.eventId, type: event.type, reason }, 'settlement event refused; moved to the dead-letter stream');
    this.options.onDeadLetter?.(reason);
    await log.append(deadLetterStream(stream), {
      eventId: event.eventId || `unknown-${event.entryId}`,
      type: 'dead-letter',
      payload: { reason, group, entryId: event.entryId, type: event.type, payload: event.payloadJson ?? JSON.stringify(event.payload), signature: event.signature ?? null, at: new Date().toISOString() },
    });
  }

  private async run(): Promise<void> {
    const { log, stream, group, logger } = this.options;
    const count = this.options.batchSize ?? 50;
    let lastClaim = 0;
    while (this.running) {
      try {
        let batch = await log.read(stream, group, this.consumer, { count, blockMs: 0, pending: true });
        if (!batch.length && Date.now() - lastClaim > 1000) {
          lastClaim = Date.now();
          batch = await log.claimStale(stream, group, this.consumer, this.options.claimIdleMs ?? 30_000, count);
        }
        if (!batch.length) batch = await log.read(stream, group, this.consumer, { count, blockMs: this.options.blockMs ?? 500, pending: false });
        for (const event of batch) {
          if (!this.running) break;
          const reason = this.options.refuse?.(event) ?? null;
          if (reason) await this.deadLetter(event, reason);
          else await this.options.handle(event);
          if (this.aborted) break;
          await log.ack(stream, group, [event.entryId]);
        }
      } catch (err) {
        if (this.aborted) break;
        // The stream or the group was lost (Redis restarted empty, or someone deleted it): make it again.
        if (/NOGROUP/.test(String((err as Error)?.message))) await log.ensureGroup(stream, group).catch(() => undefined);
        // Unacked entries stay pending and come back on the next turn.
        logger.error({ err, stream, group }, 'event consumer turn failed; retrying');
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }
}
export * from './metrics';
