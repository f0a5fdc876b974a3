import { compareEntryIds, type EventLog } from '@trading/events';
import type { Logger } from '@trading/logging';
import { marketQuote } from '../contract/market';

/** The OMS's entry type on the market ticks stream: `{ quotes: MarketQuote[] }`. */
export const MARKET_QUOTES_EVENT = 'market.quotes';

export type Quote = ReturnType<typeof marketQuote.parse>;
type Deliver = (id: string, quote: Quote) => void;

/**
 * The OMS's quotes stream (a capped Redis stream, MARKET_TICKS_STREAM; in the all-in-one without
 * Redis the shared in-process log), read once per facade instance and handed to every open quote
 * stream of the symbols concerned: one blocking read for all clients. Starts with the first
 * subscriber, at the stream's head. Only the OMS may write the stream (Redis ACLs); each quote
 * must also be the contract's MarketQuote or it is passed over.
 */
export class LiveQuoteFeed {
  private readonly subscribers = new Map<string, Set<Deliver>>();
  private loop: Promise<void> | undefined;
  private running = false;

  constructor(
    private readonly log: EventLog,
    private readonly stream: string,
    private readonly logger: Logger,
  ) {}

  /** Delivers the symbols' quotes from now on; returns the unsubscribe. */
  subscribe(symbols: readonly string[], deliver: Deliver): () => void {
    for (const symbol of symbols) {
      let followers = this.subscribers.get(symbol);
      if (!followers) this.subscribers.set(symbol, (followers = new Set()));
      followers.add(deliver);
    }
    if (!this.running) {
      this.running = true;
      this.loop = this.run();
    }
    return () => {
      for (const symbol of symbols) {
        const followers = this.subscribers.get(symbol);
        followers?.delete(deliver);
        if (followers && !followers.size) this.subscribers.delete(symbol);
      }
    };
  }

  /** The stream's newest entry id ('0-0' when empty): the id of a stream's first, current quotes. */
  head(): Promise<string> {
    return this.log.lastId(this.stream);
  }

  private async run(): Promise<void> {
    let cursor: string | undefined;
    while (this.running) {
      try {
        cursor ??= await this.log.lastId(this.stream);
        for (const entry of await this.log.after(this.stream, cursor, { count: 200, blockMs: 1000 })) {
          if (compareEntryIds(entry.entryId, cursor) > 0) cursor = entry.entryId;
          if (entry.type !== MARKET_QUOTES_EVENT || !Array.isArray(entry.payload['quotes'])) continue;
          for (const raw of entry.payload['quotes'] as unknown[]) {
            const symbol = (raw as { symbol?: unknown } | null)?.symbol;
            if (typeof symbol !== 'string' || !this.subscribers.has(symbol)) continue;
            const quote = marketQuote.safeParse(raw);
            if (!quote.success) continue;
            for (const deliver of [...(this.subscribers.get(symbol) ?? [])]) deliver(entry.entryId, quote.data);
          }
        }
      } catch (err) {
        if (!this.running) break;
        this.logger.error({ err }, 'reading the market quotes stream failed; retrying');
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
