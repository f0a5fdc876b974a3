/** Market data's operations (schemas in ../contract/market.ts). */
import { BAR_TIMEFRAMES, MAX_BAR_SYMBOLS, MAX_BARS } from '../contract/market';
import type { Operations } from './kit';

const symbolPath = { name: 'symbol', in: 'path' as const, required: true, schema: { type: 'string', pattern: '^[A-Z0-9.]{1,12}$' } };
const symbols = {
  name: 'symbols',
  in: 'query' as const,
  required: true,
  schema: { type: 'string' },
  description: 'Comma-separated instrument symbols, 1 to 100, e.g. `AAPL,MSFT`; an unknown one is a 422 naming `symbols`',
};
const quoteSymbols = {
  ...symbols,
  description: 'Comma-separated instrument symbols, 1 to 100, e.g. `AAPL,MSFT`; unknown ones are listed in `unknownSymbols`',
};
const scopes = ['read:market' as const];
/** What both bars operations take besides the symbols and the page token. */
const barParams = [
  {
    name: 'timeframe',
    in: 'query' as const,
    required: true,
    schema: { enum: BAR_TIMEFRAMES },
    description: 'Bucket size, aligned to UTC: weeks start on Monday 00:00, months on the 1st; a bad one is a 422 naming `timeframe`',
  },
  {
    name: 'start',
    in: 'query' as const,
    schema: { type: 'string' },
    description:
      'RFC 3339 time or date (00:00 UTC): the first bucket that may start then or later; default: as far back as ticks are kept (for sizes aggregated as read, from the start of the bucket holding that)',
  },
  {
    name: 'end',
    in: 'query' as const,
    schema: { type: 'string' },
    description: 'RFC 3339 time or date (00:00 UTC), exclusive: buckets starting before it; default: now',
  },
  {
    name: 'limit',
    in: 'query' as const,
    schema: { type: 'integer', minimum: 1, maximum: MAX_BARS, default: 20 },
    description: `Bars per page (all symbols together), 1 to ${MAX_BARS}; out of range: 400 naming \`limit\``,
  },
];

export const marketOperations: Operations = {
  '/market/quotes': {
    get: {
      summary:
        'Quotes: the last price and a simulated book around it (bid below and ask above by half the spread in whole ticks, sizes in whole lots), with when the price was set. Symbols no instrument has are listed apart in `unknownSymbols`; the others are still answered.',
      scopes,
      params: [quoteSymbols],
      ok: { status: 200, schema: 'QuoteList' },
      errors: [400, 422],
    },
  },
  '/market/bars': {
    get: {
      summary: `OHLCV bars of 1 to ${MAX_BAR_SYMBOLS} instruments, as \`/market/bars/{symbol}\` makes them, keyed by symbol (each oldest first): at most \`limit\` bars in all, symbol after symbol in code-point order, so one instrument's bars may go on on the next page. Symbols no instrument has are listed apart in \`unknownSymbols\`; the others are still answered. A page costs the GraphQL cost budget in proportion to \`limit\`.`,
      scopes,
      params: [
        {
          name: 'symbols',
          in: 'query',
          required: true,
          schema: { type: 'string' },
          description: `Comma-separated instrument symbols, 1 to ${MAX_BAR_SYMBOLS}, e.g. \`AAPL,MSFT\`; none, malformed or too many: 400 naming \`symbols\``,
        },
        ...barParams,
        {
          name: 'pageToken',
          in: 'query',
          schema: { type: 'string' },
          description: '`nextPageToken` of the previous page (with the same symbols, timeframe, start and end)',
        },
      ],
      ok: { status: 200, schema: 'BarSets' },
      errors: [400, 422],
    },
  },
  '/market/bars/{symbol}': {
    get: {
      summary:
        'OHLCV bars of one instrument, oldest first, aggregated from every price the paper market set (open the first, close the last of each bucket; volume simulated; `vwap` and `tradeCount`). 15Min, 30Min, 2Hour, 4Hour, 1Week (from Monday) and 1Month (calendar months) are aggregated from the kept 5Min, 1Hour and 1Day bars as they are read. Ticks are kept OMS_MARKET_TICK_RETENTION_DAYS (7 by default); buckets without ticks are left out. A page costs the GraphQL cost budget in proportion to `limit`.',
      scopes,
      params: [
        symbolPath,
        ...barParams,
        {
          name: 'pageToken',
          in: 'query',
          schema: { type: 'string' },
          description: '`nextPageToken` of the previous page (with the same symbol, timeframe, start and end)',
        },
        {
          name: 'cursor',
          in: 'query',
          schema: { type: 'string' },
          description: 'The same as `pageToken` (`nextCursor` is `nextPageToken`)',
        },
      ],
      ok: { status: 200, schema: 'BarPage' },
      errors: [400, 404, 422],
    },
  },
  '/market/clock': {
    get: {
      summary: 'Whether the market is open now, and when it next opens and closes (always open by default: sessions are whole UTC days)',
      scopes,
      ok: { status: 200, schema: 'MarketClock' },
    },
  },
  '/market/calendar': {
    get: {
      summary: 'Trading days with their open and close times (UTC), every day of the range (the paper market has no holidays)',
      scopes,
      params: [
        { name: 'start', in: 'query', schema: { type: 'string', format: 'date' }, description: 'First day (default today)' },
        {
          name: 'end',
          in: 'query',
          schema: { type: 'string', format: 'date' },
          description: 'Last day, included (default 29 days after start); at most 366 days in all',
        },
      ],
      ok: { status: 200, schema: 'MarketCalendar' },
      errors: [400, 422],
    },
  },
  '/market/instruments': {
    get: {
      summary: 'Every listed instrument, by symbol: tick and lot size, quantity limits, status and last price',
      scopes,
      ok: { status: 200, schema: 'MarketInstrumentList' },
    },
  },
  '/market/instruments/{symbol}': {
    get: {
      summary: 'One instrument (404 naming `symbol` when it is not listed)',
      scopes,
      params: [symbolPath],
      ok: { status: 200, schema: 'MarketInstrument' },
      errors: [400, 404],
    },
  },
  '/market/events': {
    get: {
      summary:
        'Live quotes (Server-Sent Events): `event: quote` with a MarketQuote each time a price of one of `symbols` changes. It starts with the current quote of each symbol, also on a reconnect with `Last-Event-ID` (quotes are not replayed: the latest is what counts). Each event has an `id`; a comment line is sent every 15 s; the stream ends with `event: end` when the session is revoked or expires. At most 5 open streams per user.',
      scopes,
      params: [
        symbols,
        {
          name: 'Last-Event-ID',
          in: 'header',
          schema: { type: 'string', pattern: '^\\d+-\\d+$' },
          description: 'Accepted for reconnecting clients: the stream starts again with the current quotes',
        },
      ],
      ok: {
        status: 200,
        schema: 'MarketQuote',
        mediaType: 'text/event-stream',
        description: 'A stream of `id: …`, `event: quote|end` and `data: <JSON>` blocks; the data of each quote is a MarketQuote',
      },
      errors: [400, 422, 429],
    },
  },
};
