export const marketDataTypeDefs = /* GraphQL */ `
  "An instrument's simulated top of book: a spread around the last price on the tick grid. Decimals are strings."
  type MarketQuote {
    symbol: String!
    "ISO 4217"
    currency: String!
    lastPrice: Decimal!
    "Below the last price by half the spread, in whole ticks (at least one, unless the price is one tick)."
    bid: Decimal!
    "Above the last price by half the spread, in whole ticks (at least one)."
    ask: Decimal!
    "Units bid (multiples of the lot; simulated, deterministic in symbol and price)."
    bidSize: Decimal!
    "Units offered."
    askSize: Decimal!
    "When the last price was set."
    timestamp: DateTime!
  }

  "One OHLCV bar aggregated from the ticks kept."
  type MarketBar {
    "The bucket's start, aligned to UTC."
    start: DateTime!
    "The bucket's first tick."
    open: Decimal!
    high: Decimal!
    low: Decimal!
    "The bucket's last tick."
    close: Decimal!
    "Summed simulated volume of the bucket's ticks."
    volume: Decimal!
    "Ticks in the bucket."
    trades: Int!
  }

  "A page of bars, oldest first."
  type MarketBarPage {
    symbol: String!
    "1Min, 5Min, 1Hour or 1Day"
    timeframe: String!
    "ISO 4217"
    currency: String!
    nodes: [MarketBar!]!
    nextCursor: String
  }

  "The paper market's clock (OMS_TRADING_HOURS)."
  type MarketClock {
    isOpen: Boolean!
    nextOpen: DateTime!
    nextClose: DateTime!
    "Now, as the clock was read."
    timestamp: DateTime!
  }

  "A trading day and its session."
  type TradingDay {
    "YYYY-MM-DD (UTC)"
    date: String!
    open: DateTime!
    close: DateTime!
  }

  extend type Query {
    "Quotes of 1 to 100 instruments, in the order asked (needs read:market)."
    marketQuotes(symbols: [String!]!): [MarketQuote!]!
    "OHLCV bars of one instrument, oldest first; timeframe 1Min, 5Min, 1Hour or 1Day; end exclusive (needs read:market)."
    marketBars(symbol: String!, timeframe: String!, start: String, end: String, limit: Int, cursor: String): MarketBarPage!
    "Whether the market is open and when it next opens and closes (needs read:market)."
    marketClock: MarketClock!
    "Trading days with their sessions; start and end are dates, both included, at most 366 days (needs read:market)."
    marketCalendar(start: String, end: String): [TradingDay!]!
    "Every instrument, ordered by symbol (needs read:market)."
    marketInstruments: [Instrument!]!
    "One instrument; NOT_FOUND naming symbol when unknown (needs read:market)."
    marketInstrument(symbol: String!): Instrument!
  }
`;
