import { randomUUID } from 'node:crypto';
import Decimal from 'decimal.js';
import type { EntityManager } from 'typeorm';
import type { EventLog } from '@trading/events';
import type { Logger } from '@trading/logging';
import { draw } from '../market/price-feed';
import { TIMEFRAMES } from './market-data.service';
import { quoteOf, type Quote, type QuoteSource } from './quote';

/** The event type of a market ticks stream entry: `{ quotes: Quote[] }`, the instruments whose price just changed. */
const MARKET_QUOTES_EVENT = 'market.quotes';

/** One kept price: what bars are made from. */
export interface Tick {
  symbol: string;
  price: string;
  volume: string;
  at: Date;
}

/**
 * Simulated traded volume of a feed step: 1 to 50 lots, a deterministic function of the feed's
 * seed, the symbol and the step (like the price itself), not the paper fills (those are the
 * accounts' own and too few to make a tape).
 */
export function simulatedVolume(seed: number, symbol: string, step: number, lotSize: string): string {
  const lots = 1 + (Math.floor(Math.abs(draw(seed, `${symbol}#volume`, step)) * 20) % 50);
  return new Decimal(lotSize).times(lots).toFixed();
}

/**
 * Keeps the ticks the feed makes (PostgreSQL, in the feed's own transaction, pruned after the
 * retention) and publishes the changed instruments' quotes on a capped stream the facade reads
 * for live prices (GET /v1/market/events); the database keeps each tick's bars (market_bars). The stream is best effort: a quote that could not be
 * published is logged, the next price change publishes again, and REST reads the database.
 */
export class MarketTicks {
  constructor(
    private readonly events: EventLog,
    private readonly options: { stream: string; streamMaxLen: number; retentionDays: number; spread: string },
    private readonly logger: Logger,
  ) {}

  /** Records ticks in the caller's transaction. */
  async record(tx: EntityManager, ticks: Tick[]): Promise<void> {
    if (!ticks.length) return;
    await tx.query(
      `INSERT INTO market_ticks (symbol, price, volume, at)
       SELECT * FROM unnest($1::text[], $2::numeric[], $3::numeric[], $4::timestamptz[])`,
      [ticks.map((t) => t.symbol), ticks.map((t) => t.price), ticks.map((t) => t.volume), ticks.map((t) => t.at.toISOString())],
    );
  }

  /** Publishes the quotes of instruments whose price changed (after their transaction committed). */
  async publish(sources: QuoteSource[]): Promise<void> {
    if (!sources.length) return;
    const quotes: Quote[] = sources.map((s) => quoteOf(s, this.options.spread));
    try {
      await this.events.append(
        this.options.stream,
        { eventId: randomUUID(), type: MARKET_QUOTES_EVENT, payload: { quotes } },
        { maxLen: this.options.streamMaxLen },
      );
    } catch (err) {
      this.logger.warn({ err, stream: this.options.stream }, 'publishing market quotes failed; live quote streams miss this change');
    }
  }

  /**
   * Deletes ticks older than the retention, a batch at a time, and the bars whose bucket ended
   * before it (market_bars, kept from the ticks by a trigger); returns how many ticks went.
   */
  async prune(manager: Pick<EntityManager, 'query'>, now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - this.options.retentionDays * 86400_000).toISOString();
    let pruned = 0;
    for (;;) {
      const [, count]: [unknown, number] = await manager.query(
        'DELETE FROM market_ticks WHERE id IN (SELECT id FROM market_ticks WHERE at < $1 LIMIT 10000)',
        [before],
      );
      pruned += count;
      if (count < 10000) break;
    }
    for (;;) {
      const [, count]: [unknown, number] = await manager.query(
        `DELETE FROM market_bars WHERE ctid IN (SELECT b.ctid FROM market_bars b
           JOIN unnest($2::text[], $3::interval[]) AS f(timeframe, width) USING (timeframe) WHERE b.bucket + f.width <= $1 LIMIT 10000)`,
        [before, Object.keys(TIMEFRAMES), Object.values(TIMEFRAMES)],
      );
      if (count < 10000) return pruned;
    }
  }
}
