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
    "The last price of the paper market."
    marketPrice: Decimal! @requires(fields: "lastPrice")
    "quantity × marketPrice"
    marketValue: Decimal! @requires(fields: "lastPrice")
    "quantity × (marketPrice − averageCost)"
    unrealizedPnl: Decimal! @requires(fields: "lastPrice")
    "quantity × (marketPrice − previousClose)"
    dayChange: Decimal! @requires(fields: "lastPrice previousClose")
  }

  "One page of holdings."
  type PositionConnection {
    "The holdings on this page."
    nodes: [Position!]!
    "Null on the last page."
    nextCursor: String
  }

  extend type Account {
    "The account's holdings, ordered by symbol. limit: 1..100, default 20."
    positions("Page size: 1..100, default 20." limit: Int, "The previous page's nextCursor; omit for the first page." cursor: String): PositionConnection!
    "The holding in one instrument (symbol such as AAPL or BRK.B); null when the account holds none."
    position("The instrument, e.g. AAPL." symbol: String!): Position
  }
`;
