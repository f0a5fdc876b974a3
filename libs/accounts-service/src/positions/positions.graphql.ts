export const positionsTypeDefs = /* GraphQL */ `
  """
  A holding. Quantities and prices are canonical decimal strings; money has two decimals, in the
  position's currency. lastPrice and previousClose are the paper market's marks (oms).
  """
  type Position @key(fields: "accountId symbol") {
    "The account holding it."
    accountId: ID!
    "The instrument (e.g. AAPL, BRK.B)."
    symbol: String!
    "Negative for a short holding."
    quantity: Decimal!
    "Average price paid per unit, never rounded."
    averageCost: Decimal!
    "quantity × averageCost"
    costBasis: Decimal!
    "ISO 4217"
    currency: String!
    "P&L booked by closing fills."
    realizedPnl: Decimal!
    "RFC 3339, UTC"
    updatedAt: DateTime!
    lastPrice: Decimal! @external
    previousClose: Decimal! @external
    openSellQuantity: Decimal! @external
    "The last price of the paper market."
    marketPrice: Decimal! @requires(fields: "lastPrice")
    "quantity × marketPrice"
    marketValue: Decimal! @requires(fields: "lastPrice")
    "quantity × (marketPrice − averageCost)"
    unrealizedPnl: Decimal! @requires(fields: "lastPrice")
    "unrealizedPnl / |costBasis| × 100, in percent with two decimals (half-up); null when costBasis is 0."
    unrealizedPnlPercent: Decimal @requires(fields: "lastPrice")
    "quantity × (marketPrice − previousClose)"
    dayChange: Decimal! @requires(fields: "lastPrice previousClose")
    "(lastPrice − previousClose) / previousClose × 100, in percent with two decimals (half-up); null when there is no previous close."
    dayChangePercent: Decimal @requires(fields: "lastPrice previousClose")
    """
    The quantity not already promised to working sell orders (what a new sell or a position close
    may still sell): quantity less the open quantity of the account's working sells in the symbol
    (a bracket's waiting exit counts what its entry has bought, an OCO pair once); never below 0.
    """
    quantityAvailable: Decimal! @requires(fields: "openSellQuantity")
  }

  "One page of holdings."
  type PositionConnection {
    "The holdings on this page."
    nodes: [Position!]!
    "Null on the last page."
    nextCursor: String
  }

  extend type Account {
    "The account's holdings, ordered by symbol; closed ones (quantity 0) only with includeClosed. limit: 1..100, default 20."
    positions(
      "Page size: 1..100, default 20."
      limit: Int
      "The previous page's nextCursor (of the same includeClosed); omit for the first page."
      cursor: String
      "Also the holdings closed out (quantity 0), which keep their realised P&L."
      includeClosed: Boolean = false
    ): PositionConnection!
    "The holding in one instrument (symbol such as AAPL or BRK.B); null when the account holds none."
    position("The instrument, e.g. AAPL." symbol: String!): Position
  }
`;
