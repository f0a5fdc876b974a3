import { followStream, type DeliveredEvent, type EventLog, type EventSigners } from '@trading/events';
import type { Logger } from '@trading/logging';
import { claimedAccountOf, clientEventOf, readClientEvent, type ClientEvent } from './client-events';

type Deliver = (event: ClientEvent) => void;
/** Told that events may be missing or repeated from here on (the stream's server lost its newest entries). */
type OnGap = (reason: string) => void;

/** What a gap says when Redis was restarted empty or failed over while streams were open. */
export const HOLDER_CHANGED_REASON =
  'The event store restarted or failed over: events may be missing or repeated since your last one; read the orders and trades again';

/** What a replay found: the account's events, oldest first, and whether older entries were left unread. */
export interface Replay {
  events: ClientEvent[];
  /** Last-Event-ID lies further back than `maxEntries`: the client missed what was not read (a gap). */
  capped: boolean;
  /**
   * Entries after Last-Event-ID that say they are the account's but whose signature no key trusted
   * now verifies (signed before a key was retired or the data directory was reset, or forged):
   * left out, so the client missed them or nothing (a gap either way; never their content).
   */
  unverified: number;
}

/**
 * The settlement stream, read once per facade instance and handed to every open event stream
 * of the account an event concerns: one blocking XREAD for all clients, no query per client.
 * Starts with the first subscriber, at the stream's head.
 */
export class LiveOrderFeed {
  /** Open streams by account: an entry of an account nobody follows is passed over unverified. */
  private readonly subscribers = new Map<string, Set<Deliver>>();
  private readonly gapListeners = new Set<OnGap>();
  private holderTimer: NodeJS.Timeout | undefined;
  private loop: Promise<void> | undefined;
  /** The replays' queue: one page read at a time. */
  private turn: Promise<void> = Promise.resolve();
  private running = false;

  constructor(
    private readonly log: EventLog,
    private readonly stream: string,
    private readonly signers: EventSigners,
    private readonly logger: Logger,
    /** How often the stream's server is asked who it is (a change: a restart or a failover). */
    private readonly holderCheckMs = 1000,
  ) {}

  /** Delivers the account's events from now on, and `onGap` when some may have been lost; returns the unsubscribe. */
  subscribe(accountId: string, deliver: Deliver, onGap?: OnGap): () => void {
    let followers = this.subscribers.get(accountId);
    if (!followers) this.subscribers.set(accountId, (followers = new Set()));
    followers.add(deliver);
    if (onGap) this.gapListeners.add(onGap);
    if (!this.running) {
      this.running = true;
      this.loop = this.run();
      this.watchHolder();
    }
    return () => {
      if (onGap) this.gapListeners.delete(onGap);
      followers.delete(deliver);
      if (!followers.size && this.subscribers.get(accountId) === followers) this.subscribers.delete(accountId);
    };
  }

  /**
   * The account's events after `afterId` (a client resuming with Last-Event-ID), oldest first.
   * Reads back from the head, at most `maxEntries` entries, so a replay costs at most that
   * whatever id the client sends. Other accounts' entries are passed over unparsed (their
   * payload does not mention the account) and none is verified; only the account's own are. Those
   * of its own that no trusted key verifies are counted (`unverified`), never shown.
   * Replays take turns page by page, so together they hold the event loop for one page at a
   * time however many run. Null once `signal` says the client left: nothing more is read for it.
   */
  async replay(
    accountId: string,
    afterId: string,
    options: { maxEntries: number; signal: AbortSignal; pageSize?: number },
  ): Promise<Replay | null> {
    const scan = await this.scanBack(accountId, afterId, options);
    if (!scan) return null;
    if (options.signal.aborted) return null;
    const { events, unverified } = this.verified(accountId, afterId, scan.mine);
    return { events, capped: scan.capped, unverified };
  }

  /**
   * The entries after `afterId` that claim to be the account's (newest first), page by page from
   * the head, at most `maxEntries` read; `capped` when older ones were left unread. Null once the client left.
   */
  private async scanBack(
    accountId: string,
    afterId: string,
    options: { maxEntries: number; signal: AbortSignal; pageSize?: number },
  ): Promise<{ mine: DeliveredEvent[]; capped: boolean } | null> {
    const pageSize = options.pageSize ?? 200;
    const mine: DeliveredEvent[] = [];
    let before = '+';
    let scanned = 0;
    let capped = false;
    for (;;) {
      const count = Math.min(pageSize, options.maxEntries - scanned);
      // Read as far back as allowed: anything left between there and Last-Event-ID is missed (count 1: is there any?).
      const page = await this.inTurn(() =>
        options.signal.aborted
          ? null
          : this.log.scanBack(this.stream, { before, after: afterId, count: Math.max(count, 1), mentioning: accountId }),
      );
      if (!page) return null;
      if (count <= 0) {
        capped = page.read > 0;
        break;
      }
      for (const entry of page.entries) if (claimedAccountOf(entry) === accountId) mine.push(entry);
      scanned += page.read;
      if (page.read < count || !page.oldest) break;
      before = page.oldest;
    }
    return { mine, capped };
  }

  /** The account's events among `mine`, oldest first, verified; those no trusted key verifies are counted and logged, never shown. */
  private verified(accountId: string, afterId: string, mine: DeliveredEvent[]): { events: ClientEvent[]; unverified: number } {
    const events: ClientEvent[] = [];
    let unverified = 0;
    const problems = new Set<string>();
    for (const entry of mine.reverse()) {
      const read = readClientEvent(entry, this.signers);
      if (read && 'unverified' in read) {
        unverified++;
        problems.add(read.unverified);
      } else if (read && read.event.accountId === accountId) events.push(read.event);
    }
    if (unverified)
      this.logger.warn(
        { stream: this.stream, afterId, unverified, problems: [...problems] },
        'a replay of order events left out entries no trusted key verifies (signed with a key no longer trusted, or forged)',
      );
    return { events, unverified };
  }

  /** Runs `work` after every page of other replays asked for before it (first come, first served). */
  private inTurn<T>(work: () => Promise<T> | T): Promise<T> {
    const mine = this.turn.then(work);
    this.turn = mine.then(
      () => undefined,
      () => undefined,
    );
    return mine;
  }

  /** True when entries after `afterId` may be gone from the stream (trimmed or deleted), so a replay cannot be whole. */
  async lostAfter(afterId: string): Promise<boolean> {
    return this.log.lostAfter(this.stream, afterId);
  }

  get openStreams(): number {
    let open = 0;
    for (const followers of this.subscribers.values()) open += followers.size;
    return open;
  }

  private run(): Promise<void> {
    return followStream(this.log, this.stream, {
      running: () => this.running,
      onEntry: (entry) => {
        const claimed = claimedAccountOf(entry);
        if (claimed === undefined || !this.subscribers.has(claimed)) return; // nobody here follows it: not verified
        const event = clientEventOf(entry, this.signers);
        if (!event) return;
        for (const deliver of [...(this.subscribers.get(event.accountId) ?? [])]) deliver(event);
      },
      onError: (err) => {
        // Redis away: keep the cursor, so clients miss nothing once it is back.
        this.logger.error({ err }, 'reading the settlement stream for order events failed; retrying');
        return 'resume';
      },
    });
  }

  /**
   * Redis streams are replicated asynchronously: a primary lost to a failover, or a server
   * restarted with nothing kept, may take its newest entries with it. The reader's cursor carries
   * on at the new server and cannot see what went missing (the OMS publishes lost events again,
   * under new ids, so some may come twice). Every open stream is told so with a gap.
   */
  private watchHolder(): void {
    const log = this.log;
    if (!log.holder) return;
    let known: string | undefined;
    const check = async () => {
      const now = await log.holder!().catch(() => undefined); // unreachable now: asked again next time
      if (now && known && now !== known) {
        this.logger.warn({ stream: this.stream }, "the event stream's Redis restarted or failed over; open event streams told of a gap");
        for (const onGap of [...this.gapListeners]) onGap(HOLDER_CHANGED_REASON);
      }
      if (now) known = now;
      if (this.running) this.holderTimer = setTimeout(() => void check(), this.holderCheckMs).unref();
    };
    void check();
  }

  async close(): Promise<void> {
    clearTimeout(this.holderTimer);
    this.running = false;
    this.subscribers.clear();
    await this.loop;
  }
}
