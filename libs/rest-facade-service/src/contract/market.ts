import { z } from '@trading/config';
import { currency, cursor, named, price, quantity, text, timestamp } from './kit';

/** Market data's answers (GET /v1/market/…): the same for every caller. Decimals are strings. */
const o = z.strictObject;

export const BAR_TIMEFRAMES = ['1Min', '5Min', '15Min', '30Min', '1Hour', '2Hour', '4Hour', '1Day', '1Week', '1Month'] as const;
/** Bars one call may answer (all symbols together), and symbols one call may name. */
export const MAX_BARS = 10_000;
export const MAX_BAR_SYMBOLS = 50;
export const INSTRUMENT_STATUSES = ['ACTIVE', 'HALTED'] as const;

export const marketQuote = named(
  'MarketQuote',
  o({
    symbol: text,
    lastPrice: price,
    bid: price.meta({
      description: 'Below the last price by half the spread in whole ticks (at least one; equal only at a one-tick price)',
    }),
    ask: price.meta({ description: 'Above the last price by half the spread in whole ticks (at least one)' }),
    bidSize: quantity.meta({ description: 'Units bid: simulated, whole lots, the same for the same symbol and price' }),
    askSize: quantity.meta({ description: 'Units offered: simulated like bidSize' }),
    timestamp: timestamp.meta({ description: 'When the last price was set' }),
    currency,
  }),
  "An instrument's simulated top of book: a spread around the last price on the tick grid",
);
export const quoteList = named(
  'QuoteList',
  o({
    quotes: z.array(marketQuote).meta({ description: 'The instruments found, in the order asked' }),
    unknownSymbols: z.array(z.string()).meta({ description: 'The symbols asked for that no instrument has (empty when all were found)' }),
  }),
);

const pageToken = z
  .string()
  .nullable()
  .meta({ description: 'Pass as `pageToken` (with the same query) for the next page; null on the last page.' });

const bar = named(
  'Bar',
  o({
    start: timestamp.meta({ description: "The bucket's start, aligned to UTC (weeks start on Monday, months on the 1st)" }),
    open: price.meta({ description: "The bucket's first tick" }),
    high: price,
    low: price,
    close: price.meta({ description: "The bucket's last tick" }),
    volume: quantity.meta({ description: "The bucket's simulated traded volume, summed over its ticks" }),
    trades: z.int().min(1).meta({ description: 'Ticks in the bucket (the same as tradeCount, kept for existing clients)' }),
    tradeCount: z.int().min(1).meta({ description: 'Ticks (trades) in the bucket' }),
    vwap: price.nullable().meta({
      description:
        'Volume-weighted average price: the sum of price × volume over the volume, rounded half away from zero to 8 decimals (trailing zeros dropped, never fewer decimals than the tick). Null when the bucket has no volume, or holds a bar kept before VWAP was',
    }),
  }),
  'One OHLCV bar; buckets without ticks are left out',
);
export const barPage = named(
  'BarPage',
  o({
    symbol: text,
    timeframe: z.enum(BAR_TIMEFRAMES),
    currency,
    bars: z.array(bar),
    nextPageToken: pageToken,
    nextCursor: cursor.meta({ description: 'The same as nextPageToken (pass it as `cursor` or `pageToken`); null on the last page.' }),
  }),
  'Bars, oldest first',
);
export const barSets = named(
  'BarSets',
  o({
    timeframe: z.enum(BAR_TIMEFRAMES),
    bars: z.record(z.string(), z.array(bar)).meta({
      description:
        "Each instrument's bars on this page, oldest first, by symbol (code-point order); an instrument without bars on this page is absent, and its bars may go on on the next page",
    }),
    currencies: z.record(z.string(), currency).meta({ description: 'The currency of each instrument in `bars`' }),
    unknownSymbols: z.array(z.string()).meta({ description: 'The symbols asked for that no instrument has (empty when all were found)' }),
    nextPageToken: pageToken,
  }),
  'Bars of several instruments: at most `limit` in all',
);

export const marketClock = named(
  'MarketClock',
  o({ isOpen: z.boolean(), nextOpen: timestamp, nextClose: timestamp, timestamp: timestamp.meta({ description: 'Now' }) }),
  "The paper market's clock (its trading hours)",
);
const tradingDay = named(
  'TradingDay',
  o({ date: z.iso.date().meta({ description: 'UTC', examples: ['2026-11-23'] }), open: timestamp, close: timestamp }),
);
export const marketCalendar = named(
  'MarketCalendar',
  o({ calendar: z.array(tradingDay) }),
  'Trading days with their sessions, oldest first',
);

export const marketInstrument = named(
  'MarketInstrument',
  o({
    symbol: text,
    name: text,
    currency,
    tickSize: price.meta({ description: 'Prices are multiples of it' }),
    lotSize: quantity.meta({ description: 'Quantities are multiples of it' }),
    minQuantity: quantity.meta({ description: 'The smallest quantity of one order' }),
    maxQuantity: quantity.meta({ description: 'The largest quantity of one order' }),
    status: z.enum(INSTRUMENT_STATUSES).meta({ description: 'HALTED: orders are refused and nothing fills' }),
    tradable: z.boolean(),
    lastPrice: price,
    previousClose: price,
  }),
  'A listed instrument of the paper market',
);
export const marketInstrumentList = named('MarketInstrumentList', o({ instruments: z.array(marketInstrument) }));
