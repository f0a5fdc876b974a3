/** What travels on a stream, and the slice of Redis streams the services use. */

/** One event as it travels: a stable id (consumers deduplicate on it), a type and a JSON payload. */
export interface DomainEvent {
  eventId: string;
  type: string;
  payload: Record<string, unknown>;
  /** The producer's signature over id, type and payload (see signature.ts); consumers check it before anything is applied. */
  signature?: string;
  /** W3C trace context of the change that produced it (not signed: it routes a trace, it books nothing). */
  traceparent?: string;
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
  /**
   * Adds an entry; `maxLen` bounds the stream to about that many entries (the oldest go), for
   * streams read only live (market ticks). Without it the stream keeps about a million.
   */
  append(stream: string, event: DomainEvent, options?: { maxLen?: number }): Promise<string>;
  ensureGroup(stream: string, group: string): Promise<void>;
  /** `pending`: this consumer's delivered-but-unacked entries; otherwise new entries (waiting up to `blockMs`). */
  read(
    stream: string,
    group: string,
    consumer: string,
    options: { count: number; blockMs: number; pending: boolean },
  ): Promise<DeliveredEvent[]>;
  /** Takes over entries another consumer left unacked for at least `minIdleMs` (it crashed). */
  claimStale(stream: string, group: string, consumer: string, minIdleMs: number, count: number): Promise<DeliveredEvent[]>;
  ack(stream: string, group: string, entryIds: string[]): Promise<void>;
  /** Entries delivered to the group and not yet acked. */
  pendingCount(stream: string, group: string): Promise<number>;
  /** The same, per consumer that holds them (a dead instance's entries wait under its name until taken over). */
  pendingByConsumer(stream: string, group: string): Promise<Record<string, number>>;
  /** Entries on the stream not yet delivered to the group (null when the server cannot tell). */
  groupLag(stream: string, group: string): Promise<number | null>;
  /** Entries of a stream, oldest first (for operators: dead letters). */
  range(stream: string, count: number): Promise<DeliveredEvent[]>;
  /**
   * Entries after `afterId` ('0-0': from the start), oldest first, waiting up to `blockMs` when
   * there are none yet. No consumer group: every reader sees every entry (live feeds to clients).
   */
  after(stream: string, afterId: string, options: { count: number; blockMs: number }): Promise<DeliveredEvent[]>;
  /**
   * Entries after `after` and before `before` ('+': up to the newest), newest first, at most
   * `count` read: a client's replay reading back from the head. `mentioning`: only entries whose
   * payload text contains it come back, unparsed otherwise (a cheap pre-filter; the caller still
   * checks what it gets). `read` and `oldest` say how far the page went, for the next one. On a
   * connection of its own, so a replay neither waits behind a live reader's blocking read nor
   * holds one up.
   */
  scanBack(
    stream: string,
    options: { before: string; after: string; count: number; mentioning?: string },
  ): Promise<{ entries: DeliveredEvent[]; read: number; oldest: string | undefined }>;
  /** The newest entry's id; '0-0' for an empty or missing stream. */
  lastId(stream: string): Promise<string>;
  /**
   * The newest entry's id at or before `id` ('0-0' when there is none): with several producers on
   * one stream, where one producer's history ends even when others have added newer entries since.
   */
  lastIdAtOrBefore(stream: string, id: string): Promise<string>;
  /**
   * True when entries after `afterId` may have been trimmed or deleted from the stream, so a
   * reader resuming there cannot get them all (false for a stream that lost nothing, or none).
   */
  lostAfter(stream: string, afterId: string): Promise<boolean>;
  /**
   * Who holds the streams now: a value that changes when the server was restarted with nothing
   * kept, or a replica took over from a lost primary (either may have lost the newest entries).
   * Undefined where it cannot tell (in memory, or a Cluster, whose shards fail over one by one).
   */
  holder?(): Promise<string | undefined>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const toFields = (e: DomainEvent) => [
  'eventId',
  e.eventId,
  'type',
  e.type,
  'payload',
  JSON.stringify(e.payload),
  ...(e.signature ? ['signature', e.signature] : []),
  ...(e.traceparent ? ['traceparent', e.traceparent] : []),
];

export function fromFields(entryId: string, fields: string[]): DeliveredEvent {
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
  return {
    entryId,
    eventId: map['eventId'] ?? '',
    type: map['type'] ?? '',
    payload,
    payloadJson,
    signature: map['signature'],
    ...(map['traceparent'] ? { traceparent: map['traceparent'] } : {}),
  };
}

/** Orders stream entry ids (`<ms>-<seq>`) as Redis does; negative when `a` comes first. */
export function compareEntryIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am - bm || as - bs;
}

/** A stream entry id as a client may send it back (Last-Event-ID). */
export const isEntryId = (value: unknown): value is string => typeof value === 'string' && /^\d{1,15}-\d{1,15}$/.test(value);

/** How `followStream` reads, and what it does with what it reads. */
export interface StreamFollower {
  /** Checked before each read: false ends the loop (a read under way still finishes, within `blockMs`). */
  running(): boolean;
  onEntry(entry: DeliveredEvent): void;
  /**
   * A read failed (Redis away): `resume` goes on from the last entry read (readers who must miss
   * nothing), `restart` from the stream's end again (readers who dropped what they knew). The
   * next read is half a second later.
   */
  onError(err: unknown): 'resume' | 'restart';
  /** Entries per read (default 200). */
  count?: number;
}

/**
 * Reads a stream live from its end, with no consumer group (every reader sees every entry): the
 * facade's live order events and quotes, the OMS's view of accounts' announcements. One blocking
 * read at a time, of up to a second.
 */
export async function followStream(log: EventLog, stream: string, follower: StreamFollower): Promise<void> {
  let cursor: string | undefined;
  while (follower.running()) {
    try {
      cursor ??= await log.lastId(stream);
      for (const entry of await log.after(stream, cursor, { count: follower.count ?? 200, blockMs: 1000 })) {
        if (compareEntryIds(entry.entryId, cursor) > 0) cursor = entry.entryId;
        follower.onEntry(entry);
      }
    } catch (err) {
      if (!follower.running()) break;
      if (follower.onError(err) === 'restart') cursor = undefined;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
