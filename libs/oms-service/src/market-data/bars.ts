import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { AppError } from '@trading/errors';
import { DEFAULT_LIMIT } from '@trading/pagination';

/** Bar sizes market_bars keeps, as REST and GraphQL spell them, and the width of each (migration MarketBars1732230000100). */
export const TIMEFRAMES = { '1Min': '1 minute', '5Min': '5 minutes', '1Hour': '1 hour', '1Day': '1 day' } as const;
type StoredTimeframe = keyof typeof TIMEFRAMES;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** The origin every kept bucket is aligned to (date_bin in the trigger). */
const ORIGIN = Date.parse('2000-01-01T00:00:00Z');
/** A Monday: weeks start on Mondays, 00:00 UTC. */
const MONDAY = Date.parse('2000-01-03T00:00:00Z');

/**
 * A bar size served: kept as it is, or aggregated when read from a finer size that is kept
 * (`of`), so ticks pay for four sizes however many are served. `per` is at most how many kept
 * bars one bar holds; `width` and `origin` its grid (none: calendar months, UTC).
 */
interface Size {
  of: StoredTimeframe;
  per: number;
  width?: number;
  origin?: number;
}
const fixed = (of: StoredTimeframe, width: number, ofWidth: number, origin = ORIGIN): Size => ({ of, per: width / ofWidth, width, origin });

/** Every bar size served, finest first. */
export const BAR_SIZES = {
  '1Min': fixed('1Min', MINUTE, MINUTE),
  '5Min': fixed('5Min', 5 * MINUTE, 5 * MINUTE),
  '15Min': fixed('5Min', 15 * MINUTE, 5 * MINUTE),
  '30Min': fixed('5Min', 30 * MINUTE, 5 * MINUTE),
  '1Hour': fixed('1Hour', HOUR, HOUR),
  '2Hour': fixed('1Hour', 2 * HOUR, HOUR),
  '4Hour': fixed('1Hour', 4 * HOUR, HOUR),
  '1Day': fixed('1Day', DAY, DAY),
  '1Week': fixed('1Day', 7 * DAY, DAY, MONDAY),
  '1Month': { of: '1Day', per: 31 },
} as const satisfies Record<string, Size>;
export type Timeframe = keyof typeof BAR_SIZES;

/** Bars one call may answer (all symbols together). */
const MAX_BARS = 10_000;
/** Symbols one bars call may name. */
export const MAX_BAR_SYMBOLS = 50;

export interface Bar {
  /** The bucket's start (RFC 3339, UTC); buckets are aligned to UTC (whole minutes, hours, days; weeks from Monday; calendar months). */
  start: string;
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
  /** Ticks aggregated (the same as tradeCount). */
  trades: number;
  /** Ticks aggregated. */
  tradeCount: number;
  /** notional / volume, rounded half away from zero to 8 decimals, at least the tick's; null without volume or notional. */
  vwap: string | null;
}

const badInput = (field: string, message: string) => new AppError('BAD_USER_INPUT', message, { field });

export function isTimeframe(value: string): value is Timeframe {
  return Object.prototype.hasOwnProperty.call(BAR_SIZES, value);
}

/** `limit` of a bars call: 1 to MAX_BARS, the lists' default page when absent. */
export function barLimit(value: number | null | undefined): number {
  if (value === undefined || value === null) return DEFAULT_LIMIT;
  if (!Number.isInteger(value) || value < 1 || value > MAX_BARS) throw badInput('limit', `limit must be an integer from 1 to ${MAX_BARS}`);
  return value;
}

/** The start of the bucket of `timeframe` holding `t`. */
export function floorBucket(timeframe: Timeframe, t: number): number {
  const size: Size = BAR_SIZES[timeframe];
  if (size.width === undefined) {
    const d = new Date(t);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  }
  return size.origin! + Math.floor((t - size.origin!) / size.width) * size.width;
}

/** The first bucket of `timeframe` that starts at or after `t`. */
export function ceilBucket(timeframe: Timeframe, t: number): number {
  const floor = floorBucket(timeframe, t);
  return floor === t ? t : nextBucket(timeframe, floor);
}

/** The bucket after the one starting at `bucket`. */
export function nextBucket(timeframe: Timeframe, bucket: number): number {
  const size: Size = BAR_SIZES[timeframe];
  if (size.width !== undefined) return bucket + size.width;
  const d = new Date(bucket);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** A page token's scope: the query it pages, hashed so fifty symbols still fit a token. */
export function barScope(kind: string, parts: readonly string[]): string {
  return `${kind}:${createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 22)}`;
}

/** A decimal as served: trailing zeros dropped, but never fewer digits than the tick's (`decimals`, parameter $n). */
const formatted = (value: string, decimals: string) => `round(${value}, greatest(scale(trim_scale(${value})), ${decimals}))::text`;

/** The bucket of an aggregated size, in SQL, from a kept bucket (`bucket`): the same grid as floorBucket. */
function bucketSql(size: Size): string {
  if (size.width === undefined) return `date_trunc('month', bucket, 'UTC')`;
  return `date_bin(INTERVAL '${size.width / 1000} seconds', bucket, TIMESTAMPTZ '${new Date(size.origin!).toISOString()}')`;
}

/**
 * The first `count` bars of one symbol whose buckets start in [from, upper) (both on the
 * timeframe's grid), oldest first. A kept size reads exactly its rows through the key. An
 * aggregated size reads at most (count − 1) × per + 1 kept rows: enough for count − 1 whole
 * bars and the first row of the next, which only says it exists and is never served (the next
 * page starts at it and reads it whole). Formatted as read: per bar in JavaScript, that cost
 * more than the read.
 */
export async function readBars(
  db: Pick<DataSource, 'query'>,
  query: { symbol: string; timeframe: Timeframe; from: number; upper: number; count: number; decimals: number },
): Promise<Array<Omit<Bar, 'start'> & { bucket: Date }>> {
  const size: Size = BAR_SIZES[query.timeframe];
  const aggregated = size.of !== query.timeframe;
  const kept = `SELECT * FROM market_bars WHERE symbol = $1 AND timeframe = $2 AND bucket >= $3 AND bucket < $4 ORDER BY bucket LIMIT $6`;
  const bars = aggregated
    ? `SELECT ${bucketSql(size)} AS bucket, (array_agg(open ORDER BY bucket))[1] AS open, max(high) AS high, min(low) AS low,
         (array_agg(close ORDER BY bucket DESC))[1] AS close, sum(volume) AS volume, sum(trades)::int AS trades,
         CASE WHEN count(notional) = count(*) THEN sum(notional) END AS notional
       FROM (${kept}) k GROUP BY 1`
    : kept;
  const vwap = 'round(notional / NULLIF(volume, 0), 8)';
  return db.query(
    `SELECT bucket, ${['open', 'high', 'low', 'close'].map((c) => `${formatted(c, '$7')} AS ${c}`).join(', ')},
       trim_scale(volume)::text AS volume, trades, trades AS "tradeCount", ${formatted(vwap, '$7')} AS vwap
     FROM (${bars}) b ORDER BY bucket LIMIT $5`,
    [
      query.symbol,
      size.of,
      new Date(query.from).toISOString(),
      new Date(query.upper).toISOString(),
      query.count,
      aggregated ? (query.count - 1) * size.per + 1 : query.count,
      query.decimals,
    ],
  );
}
