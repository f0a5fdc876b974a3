import type { DataSource } from 'typeorm';
import { AppError, errors } from '@trading/errors';
import { decimalsOf } from '@trading/money';
import { parseLimit, type CursorCodec, type Page } from '@trading/pagination';
import type { Instrument } from '../instruments/entities/instrument.entity';
import type { InstrumentsService } from '../instruments/instruments.service';
import type { TradingHours } from '../market/trading-hours';
import { quoteOf, type Quote, type QuoteSource } from './quote';

/** Bar sizes, as REST and GraphQL spell them, and the width of each: the sizes market_bars keeps (migration MarketBars1732230000100). */
export const TIMEFRAMES = { '1Min': '1 minute', '5Min': '5 minutes', '1Hour': '1 hour', '1Day': '1 day' } as const;
export type Timeframe = keyof typeof TIMEFRAMES;
const TIMEFRAME_MS: Record<Timeframe, number> = { '1Min': 60_000, '5Min': 300_000, '1Hour': 3_600_000, '1Day': 86_400_000 };

/** Symbols one quotes request may name. */
const MAX_QUOTE_SYMBOLS = 100;
/** Days one calendar request may span. */
const MAX_CALENDAR_DAYS = 366;
const SYMBOL = /^[A-Z0-9.]{1,12}$/;

export interface Bar {
  /** The bucket's start (RFC 3339, UTC); buckets are aligned to UTC (whole minutes, hours, days). */
  start: string;
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
  /** Ticks aggregated. */
  trades: number;
}

export interface MarketClock {
  isOpen: boolean;
  nextOpen: string;
  nextClose: string;
  timestamp: string;
}

export interface TradingDay {
  /** YYYY-MM-DD (UTC). */
  date: string;
  open: string;
  close: string;
}

const unprocessable = (field: string, message: string) => new AppError('UNPROCESSABLE', message, { field });

/** `start`/`end`: an RFC 3339 timestamp or a date (YYYY-MM-DD, 00:00 UTC). */
function instant(value: string | null | undefined, field: string): Date | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const ok = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(value);
  const date = new Date(value.length === 10 ? `${value}T00:00:00.000Z` : value);
  if (!ok || Number.isNaN(date.getTime()) || (value.length === 10 && date.toISOString().slice(0, 10) !== value))
    throw unprocessable(field, `${field} must be an RFC 3339 timestamp (2026-01-31T14:30:00Z) or a date (2026-01-31)`);
  return date;
}

/**
 * Market data of the paper market, the same for every caller: quotes (a simulated book around
 * the last price), OHLCV bars kept as the ticks arrive (market_bars), the clock and calendar of
 * OMS_TRADING_HOURS, and the instruments. Refusals name the argument (`symbols`, `timeframe`, …).
 */
export class MarketDataService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly instruments: InstrumentsService,
    private readonly hours: TradingHours,
    private readonly cursors: CursorCodec,
    private readonly options: { spread: string; retentionDays: number },
  ) {}

  /** Quotes in the order asked. An unknown symbol is refused (naming `symbols`), or left out with `skipUnknown`. */
  async quotes(symbols: readonly string[], skipUnknown = false): Promise<Quote[]> {
    const wanted = [...new Set(symbols.map((s) => s.trim()).filter(Boolean))];
    if (!wanted.length) throw unprocessable('symbols', 'symbols must name at least one instrument, e.g. AAPL,MSFT');
    if (wanted.length > MAX_QUOTE_SYMBOLS) throw unprocessable('symbols', `symbols may name at most ${MAX_QUOTE_SYMBOLS} instruments`);
    const malformed = wanted.find((s) => !SYMBOL.test(s));
    if (malformed !== undefined) throw unprocessable('symbols', `${malformed.slice(0, 20)} is not an instrument symbol`);
    const rows: QuoteSource[] = await this.dataSource.query(
      `SELECT symbol, currency, last_price::text AS "lastPrice", tick_size::text AS "tickSize", lot_size::text AS "lotSize",
         price_at AS "priceAt" FROM instruments WHERE symbol = ANY($1)`,
      [wanted],
    );
    const bySymbol = new Map(rows.map((r) => [r.symbol, r]));
    const unknown = wanted.filter((s) => !bySymbol.has(s));
    if (unknown.length && !skipUnknown)
      throw unprocessable('symbols', `Unknown symbol${unknown.length > 1 ? 's' : ''} ${unknown.slice(0, 10).join(', ')}`);
    return wanted.filter((s) => bySymbol.has(s)).map((s) => quoteOf(bySymbol.get(s)!, this.options.spread));
  }

  /**
   * OHLCV bars of one symbol, oldest first, from the bars kept as ticks arrive (at most the
   * retention back): open the bucket's first tick, high and low its extremes, close its last,
   * volume the sum. Bars are whole buckets: those that start at or after `start` and before
   * `end`. Buckets without ticks are left out. The cursor is valid for the same symbol,
   * timeframe, start and end only.
   */
  async bars(args: {
    symbol: string;
    timeframe: string;
    start?: string | null;
    end?: string | null;
    limit?: number | null;
    cursor?: string | null;
  }): Promise<Page<Bar> & { symbol: string; timeframe: Timeframe; currency: string }> {
    if (!(args.timeframe in TIMEFRAMES)) throw unprocessable('timeframe', `timeframe must be one of ${Object.keys(TIMEFRAMES).join(', ')}`);
    const timeframe = args.timeframe as Timeframe;
    const limit = parseLimit(args.limit ?? undefined);
    const instrument = await this.instruments.find(args.symbol);
    if (!instrument) throw errors.notFound(`Instrument ${args.symbol.slice(0, 20)}`, 'symbol');
    const now = new Date();
    const givenEnd = instant(args.end, 'end');
    const givenStart = instant(args.start, 'start');
    // The cursor names the query it pages (symbol, timeframe, start and end as sent) and carries the
    // end it was computed with, so a default end (now) stays put from page to page.
    const scope = `bars:${instrument.symbol}:${timeframe}:${args.start ?? ''}:${args.end ?? ''}`;
    const after = this.cursors.decode<{ b: string; e: string }>(args.cursor ?? undefined, scope, ['b', 'e']);
    const end = after ? new Date(after.e) : (givenEnd ?? now);
    const start = givenStart ?? new Date(now.getTime() - this.options.retentionDays * 86400_000);
    if (start >= end) throw unprocessable('start', 'start must be before end');
    // Buckets are aligned to UTC, so the page after bucket b starts exactly one bucket later.
    const from = after ? new Date(Date.parse(after.b) + TIMEFRAME_MS[timeframe]) : start;
    // The kept bars, through their key: a page reads at most limit + 1 rows, however long the range.
    // Formatted as they are read (formatPrice and canonical, in SQL): per bar in JavaScript, that cost more than the read.
    const rows: Array<{ bucket: Date; open: string; high: string; low: string; close: string; volume: string; trades: number }> =
      await this.dataSource.query(
        `SELECT bucket, ${['open', 'high', 'low', 'close'].map((c) => `round(${c}, greatest(scale(trim_scale(${c})), $6))::text AS ${c}`).join(', ')},
           trim_scale(volume)::text AS volume, trades
         FROM market_bars WHERE symbol = $1 AND timeframe = $2 AND bucket >= $3 AND bucket < $4
         ORDER BY bucket LIMIT $5`,
        [instrument.symbol, timeframe, from.toISOString(), end.toISOString(), limit + 1, decimalsOf(instrument.tickSize)],
      );
    const page = this.cursors.page(
      rows,
      limit,
      scope,
      (last) => ({ b: last.bucket.toISOString(), e: end.toISOString() }),
      ({ bucket, ...bar }): Bar => ({ start: bucket.toISOString(), ...bar }),
    );
    return { ...page, symbol: instrument.symbol, timeframe, currency: instrument.currency };
  }

  clock(now = new Date()): MarketClock {
    const { isOpen, nextOpen, nextClose } = this.hours.clock(now);
    return { isOpen, nextOpen: nextOpen.toISOString(), nextClose: nextClose.toISOString(), timestamp: now.toISOString() };
  }

  /** Trading days from `start` to `end` (dates, both included; default the next 30 days from today). */
  calendar(args: { start?: string | null; end?: string | null }, now = new Date()): TradingDay[] {
    const day = (value: string | null | undefined, field: string): Date | undefined => {
      if (value === undefined || value === null || value === '') return undefined;
      const date = new Date(`${value}T00:00:00.000Z`);
      if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value)
        throw unprocessable(field, `${field} must be a date, e.g. 2026-01-31`);
      return date;
    };
    const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    const start = day(args.start, 'start') ?? today;
    const end = day(args.end, 'end') ?? new Date(start.getTime() + 29 * 86400_000);
    if (end < start) throw unprocessable('end', 'end must not be before start');
    if ((end.getTime() - start.getTime()) / 86400_000 + 1 > MAX_CALENDAR_DAYS)
      throw unprocessable('end', `A calendar spans at most ${MAX_CALENDAR_DAYS} days`);
    return this.hours.sessions(start, end).map((s) => ({
      date: s.open.toISOString().slice(0, 10),
      open: s.open.toISOString(),
      close: s.close.toISOString(),
    }));
  }

  instrumentList(): Promise<Required<Instrument>[]> {
    return this.instruments.list();
  }

  async instrument(symbol: string): Promise<Required<Instrument>> {
    const found = SYMBOL.test(symbol) ? await this.instruments.find(symbol) : null;
    if (!found) throw errors.notFound(`Instrument ${symbol.slice(0, 20)}`, 'symbol');
    return found;
  }
}
