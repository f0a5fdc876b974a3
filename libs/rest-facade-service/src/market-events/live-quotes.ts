import { followStream, type EventLog } from '@trading/events';
import type { Logger } from '@trading/logging';
import { marketQuote } from '../contract/market';

/** The OMS's entry type on the market ticks stream: `{ quotes: MarketQuote[] }`. */
const MARKET_QUOTES_EVENT = 'market.quotes';

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

  private run(): Promise<void> {
    return followStream(this.log, this.stream, {
      running: () => this.running,
      onEntry: (entry) => {
        if (entry.type !== MARKET_QUOTES_EVENT || !Array.isArray(entry.payload['quotes'])) return;
        for (const raw of entry.payload['quotes'] as unknown[]) {
          const symbol = (raw as { symbol?: unknown } | null)?.symbol;
          if (typeof symbol !== 'string' || !this.subscribers.has(symbol)) continue;
          const quote = marketQuote.safeParse(raw);
          if (!quote.success) continue;
          for (const deliver of [...(this.subscribers.get(symbol) ?? [])]) deliver(entry.entryId, quote.data);
        }
      },
      onError: (err) => {
        this.logger.error({ err }, 'reading the market quotes stream failed; retrying');
        return 'resume';
      },
    });
  }

  async close(): Promise<void> {
    this.running = false;
    this.subscribers.clear();
    await this.loop;
  }
}
