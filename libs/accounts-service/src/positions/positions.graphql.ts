export const positionsTypeDefs = /* GraphQL */ `
  """
  A holding. Quantities and prices are canonical decimal strings; money has two decimals, in the
  position's currency. lastPrice and previousClose are the paper market's marks (oms).
  """
  type Position @key(fields: "accountId symbol") {
    accountId: ID!
    symbol: String!
    "Negative for a short holding."
    quantity: String!
    averageCost: String!
    "quantity × averageCost"
    costBasis: String!
    "ISO 4217"
    currency: String!
    "P&L booked by closing fills."
    realizedPnl: String!
    "RFC 3339, UTC"
    updatedAt: String!
    lastPrice: String! @external
    previousClose: String! @external
    "The last price of the paper market."
    marketPrice: String! @requires(fields: "lastPrice")
    "quantity × marketPrice"
    marketValue: String! @requires(fields: "lastPrice")
    "quantity × (marketPrice − averageCost)"
    unrealizedPnl: String! @requires(fields: "lastPrice")
    "quantity × (marketPrice − previousClose)"
    dayChange: String! @requires(fields: "lastPrice previousClose")
  }

  type PositionConnection {
    nodes: [Position!]!
    "Null on the last page."
    nextCursor: String
  }

  extend type Account {
    "The account's holdings, ordered by symbol. limit: 1..100, default 20."
    positions(limit: Int, cursor: String): PositionConnection!
    "The holding in one instrument (symbol such as AAPL or BRK.B); null when the account holds none."
    position(symbol: String!): Position
  }
`;
