/** The in-process stand-in for Redis streams. */
import { compareEntryIds, type DeliveredEvent, type DomainEvent, type EventLog } from './event-log';

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

  async append(stream: string, event: DomainEvent, options: { maxLen?: number } = {}): Promise<string> {
    const s = this.stream(stream);
    const entryId = `${Date.now()}-${++this.seq}`;
    s.entries.push({ ...event, payload: JSON.parse(JSON.stringify(event.payload)) as Record<string, unknown>, entryId });
    // A bounded stream read only live (no consumer group indexes into it) drops its oldest entries.
    if (options.maxLen !== undefined && !s.groups.size && s.entries.length > options.maxLen)
      s.entries.splice(0, s.entries.length - options.maxLen);
    for (const wake of [...s.waiters]) wake();
    return entryId;
  }

  async ensureGroup(stream: string, group: string): Promise<void> {
    const s = this.stream(stream);
    if (!s.groups.has(group)) s.groups.set(group, { next: 0, pending: new Map() });
  }

  async read(
    stream: string,
    group: string,
    consumer: string,
    options: { count: number; blockMs: number; pending: boolean },
  ): Promise<DeliveredEvent[]> {
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

  async pendingByConsumer(stream: string, group: string): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const { consumer } of this.group(stream, group).pending.values()) counts[consumer] = (counts[consumer] ?? 0) + 1;
    return counts;
  }

  async groupLag(stream: string, group: string): Promise<number | null> {
    return this.stream(stream).entries.length - this.group(stream, group).next;
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

  async scanBack(
    stream: string,
    options: { before: string; after: string; count: number; mentioning?: string },
  ): Promise<{ entries: DeliveredEvent[]; read: number; oldest: string | undefined }> {
    const inRange = (e: DeliveredEvent) =>
      compareEntryIds(e.entryId, options.after) > 0 && (options.before === '+' || compareEntryIds(e.entryId, options.before) < 0);
    const page = this.stream(stream).entries.filter(inRange).reverse().slice(0, options.count);
    const { mentioning } = options;
    const kept = mentioning === undefined ? page : page.filter((e) => JSON.stringify(e.payload).includes(mentioning));
    return { entries: kept, read: page.length, oldest: page.at(-1)?.entryId };
  }

  async lastId(stream: string): Promise<string> {
    return this.stream(stream).entries.at(-1)?.entryId ?? '0-0';
  }

  async lastIdAtOrBefore(stream: string, id: string): Promise<string> {
    return [...this.stream(stream).entries].reverse().find((e) => compareEntryIds(e.entryId, id) <= 0)?.entryId ?? '0-0';
  }

  async lostAfter(): Promise<boolean> {
    return false; // in-process: nothing is ever trimmed
  }

  async ping(): Promise<void> {
    /* in-process: always reachable */
  }

  async close(): Promise<void> {
    for (const s of this.streams.values()) for (const wake of [...s.waiters]) wake();
  }
}
