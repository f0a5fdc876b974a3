export const marketTypeDefs = /* GraphQL */ `
  "The paper market's mark for one instrument. Prices are canonical decimal strings."
  type Mark @inaccessible {
    symbol: String!
    "ISO 4217"
    currency: String!
    lastPrice: Decimal!
    "The previous session's closing price."
    previousClose: Decimal!
  }

  "How many US dollars one unit of the currency buys (USD is 1); cross rates go through USD."
  type FxRate @inaccessible {
    "ISO 4217"
    currency: String!
    usdRate: Decimal!
  }

  "The paper market as of one moment: every instrument's mark and every FX rate."
  type MarketSnapshot @inaccessible {
    "RFC 3339, UTC"
    asOf: DateTime!
    "Ordered by symbol."
    prices: [Mark!]!
    "Ordered by currency."
    fxRates: [FxRate!]!
  }

  "The market's prices for a holding; the accounts subgraph owns the holding itself."
  type Position @key(fields: "accountId symbol") {
    "The account holding it."
    accountId: ID!
    "The instrument (e.g. AAPL, BRK.B)."
    symbol: String!
    "The paper market's last price (from oms)."
    lastPrice: Decimal!
    "The previous session's closing price (from oms)."
    previousClose: Decimal!
  }

  extend type Account {
    "The market this account is valued at (for margin and portfolios)."
    market: MarketSnapshot! @inaccessible
  }
`;
