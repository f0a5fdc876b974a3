export const instrumentsTypeDefs = /* GraphQL */ `
  "A tradable instrument of the paper market. Decimals are strings."
  type Instrument {
    symbol: String!
    name: String!
    "ISO 4217"
    currency: String!
    tickSize: String!
    lotSize: String!
    lastPrice: String!
    "The previous session's closing price."
    previousClose: String!
    tradable: Boolean!
    "Smallest quantity one order may have."
    minQuantity: String!
    "Largest quantity one order may have."
    maxQuantity: String!
  }

  type Query {
    instruments: [Instrument!]!
  }
`;
