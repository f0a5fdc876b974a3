export const marketDataTypeDefs = /* GraphQL */ `
  "An instrument's simulated top of book: a spread around the last price on the tick grid. Decimals are strings."
  type MarketQuote {
    "The instrument (e.g. AAPL)."
    symbol: String!
    "ISO 4217"
    currency: String!
    "The paper market's last price."
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

  "One OHLCV bar aggregated from the ticks kept; 15Min, 30Min, 2Hour, 4Hour, 1Week and 1Month bars are aggregated from finer bars as they are read."
  type MarketBar {
    "The bucket's start, aligned to UTC."
    start: DateTime!
    "The bucket's first tick."
    open: Decimal!
    "The bucket's highest tick."
    high: Decimal!
    "The bucket's lowest tick."
    low: Decimal!
    "The bucket's last tick."
    close: Decimal!
    "Summed simulated volume of the bucket's ticks."
    volume: Decimal!
    "Ticks in the bucket (the same as tradeCount, kept for existing clients)."
    trades: Int!
    "Ticks (trades) in the bucket."
    tradeCount: Int!
    "Volume-weighted average price: the sum of price × volume over the volume, rounded half away from zero to 8 decimals (trailing zeros dropped, never fewer decimals than the tick). Null when the bucket has no volume, or holds a bar kept before VWAP was (its first ticks already pruned)."
    vwap: Decimal
  }

  "A page of bars, oldest first."
  type MarketBarPage {
    "The instrument the bars are of."
    symbol: String!
    "1Min, 5Min, 15Min, 30Min, 1Hour, 2Hour, 4Hour, 1Day, 1Week (from Monday) or 1Month"
    timeframe: String!
    "ISO 4217"
    currency: String!
    "The bars of this page, oldest first."
    nodes: [MarketBar!]!
    "Pass as pageToken (with the same query) for the next page; null on the last."
    nextPageToken: String
    "The same as nextPageToken (pass it as cursor or pageToken)."
    nextCursor: String
  }

  "One instrument's bars in a page of several."
  type MarketBarSeries {
    "The instrument."
    symbol: String!
    "ISO 4217"
    currency: String!
    "Its bars on this page, oldest first."
    nodes: [MarketBar!]!
  }

  "A page of bars of several instruments: at most limit bars in all, by symbol, each instrument's oldest first."
  type MarketBarSets {
    "1Min, 5Min, 15Min, 30Min, 1Hour, 2Hour, 4Hour, 1Day, 1Week (from Monday) or 1Month"
    timeframe: String!
    "By symbol (code-point order); an instrument without bars on this page is left out. An instrument's bars may go on on the next page."
    bars: [MarketBarSeries!]!
    "The symbols asked for that no instrument has (empty when all were found)."
    unknownSymbols: [String!]!
    "Pass as pageToken (with the same query) for the next page; null on the last."
    nextPageToken: String
  }

  "The paper market's clock (OMS_TRADING_HOURS)."
  type MarketClock {
    "Whether orders that need an open market are accepted now."
    isOpen: Boolean!
    "When the market next opens (now or later)."
    nextOpen: DateTime!
    "When the current or next session closes."
    nextClose: DateTime!
    "Now, as the clock was read."
    timestamp: DateTime!
  }

  "A trading day and its session."
  type TradingDay {
    "YYYY-MM-DD (UTC)"
    date: String!
    "When that day's session opens."
    open: DateTime!
    "When that day's session closes."
    close: DateTime!
  }

  extend type Query {
    "Quotes of 1 to 100 instruments, in the order asked; an unknown symbol is refused (UNPROCESSABLE naming symbols) unless skipUnknown (needs read:market)."
    marketQuotes("1 to 100 symbols." symbols: [String!]!, "Leave unknown symbols out of the answer instead of refusing it." skipUnknown: Boolean = false): [MarketQuote!]!
    "OHLCV bars of one instrument, oldest first; end exclusive; priced by limit (needs read:market)."
    marketBars(
      "The instrument."
      symbol: String!
      "1Min, 5Min, 15Min, 30Min, 1Hour, 2Hour, 4Hour, 1Day, 1Week (from Monday) or 1Month; buckets aligned to UTC."
      timeframe: String!
      "RFC 3339; the first bucket that may be included."
      start: String
      "RFC 3339, exclusive."
      end: String
      "Bars per page, 1 to 10000 (default 20)."
      limit: Int
      "nextCursor of the previous page (the same as pageToken)."
      cursor: String
      "nextPageToken of the previous page."
      pageToken: String
    ): MarketBarPage!
    "OHLCV bars of 1 to 50 instruments, at most limit in all, by symbol and each oldest first; unknown symbols listed apart; priced by limit (needs read:market)."
    marketBarSets(
      "1 to 50 symbols."
      symbols: [String!]!
      "1Min, 5Min, 15Min, 30Min, 1Hour, 2Hour, 4Hour, 1Day, 1Week (from Monday) or 1Month; buckets aligned to UTC."
      timeframe: String!
      "RFC 3339; the first bucket that may be included."
      start: String
      "RFC 3339, exclusive."
      end: String
      "Bars per page in all, 1 to 10000 (default 20)."
      limit: Int
      "nextPageToken of the previous page."
      pageToken: String
    ): MarketBarSets!
    "Whether the market is open and when it next opens and closes (needs read:market)."
    marketClock: MarketClock!
    "Trading days with their sessions; start and end are dates, both included, at most 366 days (needs read:market)."
    marketCalendar("YYYY-MM-DD, included." start: String, "YYYY-MM-DD, included." end: String): [TradingDay!]!
    "Every instrument, ordered by symbol (needs read:market)."
    marketInstruments: [Instrument!]!
    "One instrument; NOT_FOUND naming symbol when unknown (needs read:market)."
    marketInstrument("The instrument's symbol." symbol: String!): Instrument!
  }
`;
