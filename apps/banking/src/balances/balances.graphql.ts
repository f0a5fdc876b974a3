export const balancesTypeDefs = /* GraphQL */ `
  "Cash in one currency. Decimals are strings."
  type CashBalance {
    "ISO 4217"
    currency: String!
    cash: String!
  }

  type Account @key(fields: "id") {
    id: ID!
    "Cash per currency, from the double-entry ledger."
    balances: [CashBalance!]!
  }
`;
