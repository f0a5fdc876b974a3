import type { DataSource } from 'typeorm';
import { Bulkhead } from '@trading/db';
import { AppError, errors } from '@trading/errors';
import { decimalsOf } from '@trading/money';
import type { CursorCodec, Page } from '@trading/pagination';
import type { Instrument } from '../instruments/entities/instrument.entity';
import type { InstrumentsService } from '../instruments/instruments.service';
import type { TradingHours } from '../market/trading-hours';
import {
  BAR_SIZES,
  barLimit,
  barScope,
  ceilBucket,
  floorBucket,
  isTimeframe,
  MAX_BAR_SYMBOLS,
  nextBucket,
  readBars,
  type Bar,
  type Timeframe,
} from './bars';
import { quoteOf, type Quote, type QuoteSource } from './quote';

export { TIMEFRAMES, type Bar, type Timeframe } from './bars';

/** Symbols one quotes request may name. */
const MAX_QUOTE_SYMBOLS = 100;
/** Days one calendar request may span. */
const MAX_CALENDAR_DAYS = 366;
const SYMBOL = /^[A-Z0-9.]{1,12}$/;
/** The last bucket start a bars query names. */
const LAST_BUCKET = Date.UTC(9999, 0, 1);

/** One instrument's bars of a page of several. */
interface BarSeries {
  symbol: string;
  currency: string;
  nodes: Bar[];
}

/** A page of bars of several instruments, by symbol, each oldest first. */
export interface BarSets {
  timeframe: Timeframe;
  bars: BarSeries[];
  unknownSymbols: string[];
  nextPageToken: string | null;
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

function timeframeOf(value: string): Timeframe {
  if (!isTimeframe(value)) throw unprocessable('timeframe', `timeframe must be one of ${Object.keys(BAR_SIZES).join(', ')}`);
  return value;
}

/** The symbols of a bars call, once each, in code-point order: 1 to MAX_BAR_SYMBOLS well-formed ones, else 400 naming `symbols`. */
function barSymbols(symbols: readonly string[]): string[] {
  const wanted = [...new Set(symbols.map((s) => s.trim()).filter(Boolean))].sort();
  if (!wanted.length) throw errors.badInput('symbols', 'symbols must name at least one instrument, e.g. AAPL,MSFT');
  if (wanted.length > MAX_BAR_SYMBOLS) throw errors.badInput('symbols', `symbols may name at most ${MAX_BAR_SYMBOLS} instruments`);
  const malformed = wanted.find((s) => !SYMBOL.test(s));
  if (malformed !== undefined) throw errors.badInput('symbols', `${malformed.slice(0, 20)} is not an instrument symbol`);
  return wanted;
}

/** `pageToken`, or `cursor` as it was first named; both at once only when they agree. */
function pageTokenOf(args: { cursor?: string | null; pageToken?: string | null }): { value: string | undefined; field: string } {
  const { cursor, pageToken } = args;
  if (cursor && pageToken && cursor !== pageToken) throw errors.badInput('pageToken', 'Send pageToken or cursor, not both');
  return pageToken ? { value: pageToken, field: 'pageToken' } : { value: cursor ?? undefined, field: 'cursor' };
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
    /** Pages of bars read at once (OMS_BAR_READS): the rest wait, so charting never takes the pool from orders. */
    private readonly barReads = new Bulkhead(2),
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
   * volume the sum, VWAP the traded notional over the volume. Sizes not kept (15Min, 30Min,
   * 2Hour, 4Hour, 1Week, 1Month) are aggregated as read from a finer kept one. Bars are whole
   * buckets: those that start at or after `start` and before `end`. Buckets without ticks are
   * left out. The page token (`pageToken`, or `cursor` as before) is valid for the same symbol,
   * timeframe, start and end only.
   */
  async bars(args: {
    symbol: string;
    timeframe: string;
    start?: string | null;
    end?: string | null;
    limit?: number | null;
    cursor?: string | null;
    pageToken?: string | null;
  }): Promise<Page<Bar> & { symbol: string; timeframe: Timeframe; currency: string; nextPageToken: string | null }> {
    const timeframe = timeframeOf(args.timeframe);
    const limit = barLimit(args.limit);
    const token = pageTokenOf(args);
    const instrument = await this.instruments.find(args.symbol);
    if (!instrument) throw errors.notFound(`Instrument ${args.symbol.slice(0, 20)}`, 'symbol');
    // The token names the query it pages (symbol, timeframe, start and end as sent) and carries the
    // end it was computed with, so a default end (now) stays put from page to page.
    const scope = `bars:${instrument.symbol}:${timeframe}:${args.start ?? ''}:${args.end ?? ''}`;
    const after = this.cursors.decode<{ b: string; e: string }>(token.value, scope, ['b', 'e'], token.field);
    const { from, upper, end } = this.range(timeframe, args, after?.e);
    const rows = await this.barReads.run(() =>
      readBars(this.dataSource, {
        symbol: instrument.symbol,
        timeframe,
        from: after ? nextBucket(timeframe, Date.parse(after.b)) : from,
        upper,
        count: limit + 1,
        decimals: decimalsOf(instrument.tickSize),
      }),
    );
    const page = this.cursors.page(
      rows,
      limit,
      scope,
      (last) => ({ b: last.bucket.toISOString(), e: end.toISOString() }),
      ({ bucket, ...bar }): Bar => ({ start: bucket.toISOString(), ...bar }),
    );
    return { ...page, nextPageToken: page.nextCursor, symbol: instrument.symbol, timeframe, currency: instrument.currency };
  }

  /**
   * Bars of several symbols (1 to MAX_BAR_SYMBOLS) as `bars` makes them, by symbol (in code-point
   * order), each oldest first: a page holds at most `limit` bars in all, so it costs what it
   * serves however many symbols it names. Symbols no instrument has are listed apart; a symbol
   * without bars on the page is left out. The page token is valid for the same symbols,
   * timeframe, start and end only.
   */
  async barSets(args: {
    symbols: readonly string[];
    timeframe: string;
    start?: string | null;
    end?: string | null;
    limit?: number | null;
    pageToken?: string | null;
  }): Promise<BarSets> {
    const timeframe = timeframeOf(args.timeframe);
    const limit = barLimit(args.limit);
    const wanted = barSymbols(args.symbols);
    const found: Array<{ symbol: string; currency: string; tickSize: string }> = await this.dataSource.query(
      'SELECT symbol, currency, tick_size::text AS "tickSize" FROM instruments WHERE symbol = ANY($1)',
      [wanted],
    );
    const bySymbol = new Map(found.map((i) => [i.symbol, i]));
    const scope = barScope('barsets', [timeframe, args.start ?? '', args.end ?? '', ...wanted]);
    const after = this.cursors.decode<{ s: string; b: string; e: string }>(args.pageToken, scope, ['s', 'b', 'e'], 'pageToken');
    const { from, upper, end } = this.range(timeframe, args, after?.e);
    // Symbol after symbol until the page and one more bar (whether another page exists) are read: one page, one turn of the bar reads.
    const rows = await this.barReads.run(async () => {
      const read: Array<Awaited<ReturnType<typeof readBars>>[number] & { symbol: string }> = [];
      for (const symbol of wanted) {
        const instrument = bySymbol.get(symbol);
        if (!instrument || (after && symbol < after.s)) continue;
        if (read.length > limit) break;
        const bars = await readBars(this.dataSource, {
          symbol,
          timeframe,
          from: after && symbol === after.s ? nextBucket(timeframe, Date.parse(after.b)) : from,
          upper,
          count: limit + 1 - read.length,
          decimals: decimalsOf(instrument.tickSize),
        });
        read.push(...bars.map((r) => ({ ...r, symbol })));
      }
      return read;
    });
    const page = this.cursors.page(
      rows,
      limit,
      scope,
      (last) => ({ s: last.symbol, b: last.bucket.toISOString(), e: end.toISOString() }),
      (row) => row,
    );
    const bars: BarSeries[] = [];
    for (const { symbol, bucket, ...bar } of page.nodes) {
      if (bars[bars.length - 1]?.symbol !== symbol) bars.push({ symbol, currency: bySymbol.get(symbol)!.currency, nodes: [] });
      bars[bars.length - 1]!.nodes.push({ start: bucket.toISOString(), ...bar });
    }
    return { timeframe, bars, unknownSymbols: wanted.filter((s) => !bySymbol.has(s)), nextPageToken: page.nextCursor };
  }

  /**
   * The buckets `start` and `end` select, on the timeframe's grid: [from, upper). `end` is the
   * one a page token carries, else as sent, else now; `start` as sent, else the retention back
   * (for an aggregated size, from the start of the bucket holding that, so the current week or
   * month is answered).
   */
  private range(
    timeframe: Timeframe,
    args: { start?: string | null; end?: string | null },
    carriedEnd: string | undefined,
  ): { from: number; upper: number; end: Date } {
    const now = Date.now();
    const givenEnd = instant(args.end, 'end');
    const givenStart = instant(args.start, 'start');
    const end = carriedEnd !== undefined ? new Date(carriedEnd) : (givenEnd ?? new Date(now));
    const retained = now - this.options.retentionDays * 86400_000;
    const start = givenStart ?? new Date(BAR_SIZES[timeframe].of === timeframe ? retained : floorBucket(timeframe, retained));
    if (start >= end) throw unprocessable('start', 'start must be before end');
    // Dates far out (year 9999 and on) cannot be sent to PostgreSQL as RFC 3339: no bar is there anyway.
    const within = (t: number) => Math.min(Math.max(t, 0), LAST_BUCKET);
    return { from: within(ceilBucket(timeframe, start.getTime())), upper: within(ceilBucket(timeframe, end.getTime())), end };
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
