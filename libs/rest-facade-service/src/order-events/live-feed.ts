import { compareEntryIds, type EventLog, type EventSigners } from '@trading/events';
import type { Logger } from '@trading/logging';
import { clientEventOf, type ClientEvent } from './client-events';

type Deliver = (event: ClientEvent) => void;

/**
 * The settlement stream, read once per facade instance and handed to every open event stream
 * of the account an event concerns: one blocking XREAD for all clients, no query per client.
 * Starts with the first subscriber, at the stream's head.
 */
export class LiveOrderFeed {
  private readonly subscribers = new Map<Deliver, string>();
  private loop: Promise<void> | undefined;
  private running = false;

  constructor(
    private readonly log: EventLog,
    private readonly stream: string,
    private readonly signers: EventSigners,
    private readonly logger: Logger,
  ) {}

  /** Delivers the account's events from now on; returns the unsubscribe. */
  subscribe(accountId: string, deliver: Deliver): () => void {
    this.subscribers.set(deliver, accountId);
    if (!this.running) {
      this.running = true;
      this.loop = this.run();
    }
    return () => this.subscribers.delete(deliver);
  }

  /**
   * The account's events after `afterId`, from the stream itself (a client resuming with
   * Last-Event-ID), oldest first, `pageSize` entries read at a time.
   */
  async *replay(accountId: string, afterId: string, pageSize = 500): AsyncGenerator<ClientEvent> {
    let cursor = afterId;
    for (;;) {
      const page = await this.log.after(this.stream, cursor, { count: pageSize, blockMs: 0 });
      for (const entry of page) {
        cursor = entry.entryId;
        const event = clientEventOf(entry, this.signers);
        if (event && event.accountId === accountId) yield event;
      }
      if (page.length < pageSize) return;
    }
  }

  /** True when entries after `afterId` may be gone from the stream (trimmed or deleted), so a replay cannot be whole. */
  async lostAfter(afterId: string): Promise<boolean> {
    return this.log.lostAfter(this.stream, afterId);
  }

  get openStreams(): number {
    return this.subscribers.size;
  }

  private async run(): Promise<void> {
    let cursor: string | undefined;
    while (this.running) {
      try {
        cursor ??= await this.log.lastId(this.stream);
        for (const entry of await this.log.after(this.stream, cursor, { count: 200, blockMs: 1000 })) {
          if (compareEntryIds(entry.entryId, cursor) > 0) cursor = entry.entryId;
          const event = clientEventOf(entry, this.signers);
          if (!event) continue;
          for (const [deliver, accountId] of this.subscribers) if (accountId === event.accountId) deliver(event);
        }
      } catch (err) {
        if (!this.running) break;
        // Redis away: keep the cursor, so clients miss nothing once it is back.
        this.logger.error({ err }, 'reading the settlement stream for order events failed; retrying');
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  async close(): Promise<void> {
    this.running = false;
    this.subscribers.clear();
    await this.loop;
  }
}
