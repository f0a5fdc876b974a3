export const positionsTypeDefs = /* GraphQL */ `
  "A holding. Decimals are strings so no precision is lost."
  type Position {
    symbol: String!
    quantity: String!
    averageCost: String!
    "ISO 4217"
    currency: String!
  }

  extend type Account {
    positions: [Position!]!
  }
`;
