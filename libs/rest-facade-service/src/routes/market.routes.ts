import type { Request } from 'express';
import { errors } from '@trading/errors';
import { MAX_BAR_SYMBOLS, MAX_BARS } from '../contract/market';
import { queryParam } from './params';
import type { RestRoute } from './route';

/**
 * Market data: the same for every caller, so no account in the path; read:market.
 * Value rules (known symbols, timeframes, ranges) are the OMS's, refused there with a 422 naming
 * the parameter; here only the parameters' shape (given once).
 */
const QUOTE = 'symbol lastPrice bid ask bidSize askSize timestamp currency';
const BAR = 'start open high low close volume trades tradeCount vwap';
const INSTRUMENT = 'symbol name currency tickSize lotSize minQuantity maxQuantity tradable lastPrice previousClose';

const instrument = (i: Record<string, unknown> & { tradable: boolean }) => ({
  symbol: i['symbol'],
  name: i['name'],
  currency: i['currency'],
  tickSize: i['tickSize'],
  lotSize: i['lotSize'],
  minQuantity: i['minQuantity'],
  maxQuantity: i['maxQuantity'],
  status: i.tradable ? 'ACTIVE' : 'HALTED',
  tradable: i.tradable,
  lastPrice: i['lastPrice'],
  previousClose: i['previousClose'],
});

/** `symbols=AAPL,MSFT` (comma-separated; the OMS checks each, at most 100). */
export function symbolsParam(req: Request): string[] {
  const raw = queryParam(req, 'symbols');
  if (raw === undefined || !raw.trim())
    throw errors.unprocessable('symbols', 'symbols is required: a comma-separated list, e.g. AAPL,MSFT');
  if (raw.length > 2000) throw errors.unprocessable('symbols', 'symbols is too long (at most 100 symbols)');
  return raw.split(',').map((s) => s.trim());
}

/** An optional integer limit as the OMS takes it (it checks the range; 400 naming `limit`). */
const limitParam = (req: Request) => {
  const raw = queryParam(req, 'limit');
  if (raw === undefined) return undefined;
  if (!/^\d{1,6}$/.test(raw)) throw errors.badInput('limit', `limit must be an integer from 1 to ${MAX_BARS}`);
  return Number(raw);
};

/** `symbols=AAPL,MSFT` of a bars call: 1 to MAX_BAR_SYMBOLS well-formed symbols, else 400 naming `symbols`. */
function barSymbolsParam(req: Request): string[] {
  const raw = queryParam(req, 'symbols');
  if (raw === undefined || !raw.trim()) throw errors.badInput('symbols', 'symbols is required: a comma-separated list, e.g. AAPL,MSFT');
  const symbols = [...new Set(raw.split(',').map((s) => s.trim()))].filter(Boolean);
  if (raw.length > 1000 || symbols.length > MAX_BAR_SYMBOLS)
    throw errors.badInput('symbols', `symbols may name at most ${MAX_BAR_SYMBOLS} instruments`);
  const malformed = symbols.find((s) => !/^[A-Z0-9.]{1,12}$/.test(s));
  if (malformed !== undefined) throw errors.badInput('symbols', `${malformed.slice(0, 20)} is not an instrument symbol`);
  if (!symbols.length) throw errors.badInput('symbols', 'symbols must name at least one instrument, e.g. AAPL,MSFT');
  return symbols;
}

/** `pageToken`, or `cursor` as it was first named. */
const tokenParams = (req: Request) => ({ cursor: queryParam(req, 'cursor'), pageToken: queryParam(req, 'pageToken') });

export const marketRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/market/quotes',
    scopes: ['read:market'],
    document: /* GraphQL */ `
      query MarketQuotes($symbols: [String!]!) { marketQuotes(symbols: $symbols, skipUnknown: true) { ${QUOTE} } }
    `,
    variables: (req) => ({ symbols: symbolsParam(req) }),
    // One unknown symbol does not cost the caller the others' quotes: it is listed apart.
    shape: (data: { marketQuotes: Array<{ symbol: string }> }, req) => {
      const found = new Set(data.marketQuotes.map((q) => q.symbol));
      const asked = new Set(symbolsParam(req).filter(Boolean));
      return { quotes: data.marketQuotes, unknownSymbols: [...asked].filter((s) => !found.has(s)) };
    },
  },
  {
    method: 'GET',
    path: '/market/bars',
    scopes: ['read:market'],
    document: /* GraphQL */ `
      query MarketBarSets($symbols: [String!]!, $timeframe: String!, $start: String, $end: String, $limit: Int, $pageToken: String) {
        sets: marketBarSets(symbols: $symbols, timeframe: $timeframe, start: $start, end: $end, limit: $limit, pageToken: $pageToken) {
          timeframe bars { symbol currency nodes { ${BAR} } } unknownSymbols nextPageToken
        }
      }
    `,
    variables: (req) => ({
      symbols: barSymbolsParam(req),
      timeframe: queryParam(req, 'timeframe') ?? '',
      start: queryParam(req, 'start'),
      end: queryParam(req, 'end'),
      limit: limitParam(req),
      pageToken: queryParam(req, 'pageToken'),
    }),
    // Keyed by symbol, as a chart asks for a symbol's series; unknown symbols listed apart, as for quotes.
    shape: (data: {
      sets: {
        timeframe: string;
        bars: Array<{ symbol: string; currency: string; nodes: unknown[] }>;
        unknownSymbols: string[];
        nextPageToken: string | null;
      };
    }) => ({
      timeframe: data.sets.timeframe,
      bars: Object.fromEntries(data.sets.bars.map((s) => [s.symbol, s.nodes])),
      currencies: Object.fromEntries(data.sets.bars.map((s) => [s.symbol, s.currency])),
      unknownSymbols: data.sets.unknownSymbols,
      nextPageToken: data.sets.nextPageToken,
    }),
  },
  {
    method: 'GET',
    path: '/market/bars/:symbol',
    scopes: ['read:market'],
    document: /* GraphQL */ `
      query MarketBars($symbol: String!, $timeframe: String!, $start: String, $end: String, $limit: Int, $cursor: String, $pageToken: String) {
        bars: marketBars(symbol: $symbol, timeframe: $timeframe, start: $start, end: $end, limit: $limit, cursor: $cursor, pageToken: $pageToken) {
          symbol timeframe currency nodes { ${BAR} } nextPageToken nextCursor
        }
      }
    `,
    variables: (req) => ({
      symbol: req.params['symbol'],
      timeframe: queryParam(req, 'timeframe') ?? '',
      start: queryParam(req, 'start'),
      end: queryParam(req, 'end'),
      limit: limitParam(req),
      ...tokenParams(req),
    }),
    shape: (data) => {
      const { nodes, ...page } = data.bars;
      return {
        symbol: page.symbol,
        timeframe: page.timeframe,
        currency: page.currency,
        bars: nodes,
        nextPageToken: page.nextPageToken,
        nextCursor: page.nextCursor,
      };
    },
  },
  {
    method: 'GET',
    path: '/market/clock',
    scopes: ['read:market'],
    document: /* GraphQL */ `
      query MarketClock { marketClock { isOpen nextOpen nextClose timestamp } }
    `,
    shape: (data) => data.marketClock,
  },
  {
    method: 'GET',
    path: '/market/calendar',
    scopes: ['read:market'],
    document: /* GraphQL */ `
      query MarketCalendar($start: String, $end: String) { marketCalendar(start: $start, end: $end) { date open close } }
    `,
    variables: (req) => ({ start: queryParam(req, 'start'), end: queryParam(req, 'end') }),
    shape: (data) => ({ calendar: data.marketCalendar }),
  },
  {
    method: 'GET',
    path: '/market/instruments',
    scopes: ['read:market'],
    document: /* GraphQL */ `
      query MarketInstruments { marketInstruments { ${INSTRUMENT} } }
    `,
    shape: (data) => ({ instruments: data.marketInstruments.map(instrument) }),
  },
  {
    method: 'GET',
    path: '/market/instruments/:symbol',
    scopes: ['read:market'],
    document: /* GraphQL */ `
      query MarketInstrument($symbol: String!) { marketInstrument(symbol: $symbol) { ${INSTRUMENT} } }
    `,
    variables: (req) => ({ symbol: req.params['symbol'] }),
    shape: (data) => instrument(data.marketInstrument),
  },
];
