export const settlementTypeDefs = /* GraphQL */ `
  "How much of a holding came from trades applied so far. The OMS checks sells against it: holding − tradedQuantity + its own net traded quantity is the holding including trades not yet applied here."
  type PositionSettlement @inaccessible {
    symbol: String!
    "0 when the account holds none."
    quantity: Decimal!
    "Net quantity the applied trades added (buys minus sells)."
    tradedQuantity: Decimal!
  }

  extend type Account {
    "For the OMS's sell checks only; not in the public API."
    positionSettlement(symbol: String!): PositionSettlement! @inaccessible
  }
`;
