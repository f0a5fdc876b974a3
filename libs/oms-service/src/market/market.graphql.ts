export const marketTypeDefs = /* GraphQL */ `
  "The paper market's mark for one instrument. Prices are canonical decimal strings."
  type Mark @inaccessible {
    symbol: String!
    "ISO 4217"
    currency: String!
    lastPrice: String!
    "The previous session's closing price."
    previousClose: String!
  }

  "How many US dollars one unit of the currency buys (USD is 1); cross rates go through USD."
  type FxRate @inaccessible {
    "ISO 4217"
    currency: String!
    usdRate: String!
  }

  "The paper market as of one moment: every instrument's mark and every FX rate."
  type MarketSnapshot @inaccessible {
    "RFC 3339, UTC"
    asOf: String!
    "Ordered by symbol."
    prices: [Mark!]!
    "Ordered by currency."
    fxRates: [FxRate!]!
  }

  "The market's prices for a holding; the accounts subgraph owns the holding itself."
  type Position @key(fields: "accountId symbol") {
    accountId: ID!
    symbol: String!
    lastPrice: String!
    previousClose: String!
  }

  extend type Account {
    "The market this account is valued at (for margin and portfolios)."
    market: MarketSnapshot! @inaccessible
  }
`;
