import { z } from '@trading/config';
import { currency, cursor, named, price, quantity, text, timestamp } from './kit';

/** Market data's answers (GET /v1/market/…): the same for every caller. Decimals are strings. */
const o = z.strictObject;

export const BAR_TIMEFRAMES = ['1Min', '5Min', '1Hour', '1Day'] as const;
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

const bar = named(
  'Bar',
  o({
    start: timestamp.meta({ description: "The bucket's start, aligned to UTC" }),
    open: price.meta({ description: "The bucket's first tick" }),
    high: price,
    low: price,
    close: price.meta({ description: "The bucket's last tick" }),
    volume: quantity.meta({ description: "The bucket's simulated traded volume, summed over its ticks" }),
    trades: z.int().min(1).meta({ description: 'Ticks in the bucket' }),
  }),
  'One OHLCV bar; buckets without ticks are left out',
);
export const barPage = named(
  'BarPage',
  o({ symbol: text, timeframe: z.enum(BAR_TIMEFRAMES), currency, bars: z.array(bar), nextCursor: cursor }),
  'Bars, oldest first',
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
