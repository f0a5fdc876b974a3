export const instrumentsTypeDefs = /* GraphQL */ `
  "A tradable instrument of the paper market. Decimals are strings."
  type Instrument {
    "The ticker (e.g. AAPL, BRK.B)."
    symbol: String!
    "Its name."
    name: String!
    "ISO 4217"
    currency: String!
    "Prices are multiples of it."
    tickSize: Decimal!
    "Quantities are multiples of it."
    lotSize: Decimal!
    "The paper market's last price."
    lastPrice: Decimal!
    "The previous session's closing price."
    previousClose: Decimal!
    "Whether orders are accepted."
    tradable: Boolean!
    "Smallest quantity one order may have."
    minQuantity: Decimal!
    "Largest quantity one order may have."
    maxQuantity: Decimal!
  }

  type Query {
    "Every instrument of the paper market, ordered by symbol."
    instruments: [Instrument!]!
  }
`;
