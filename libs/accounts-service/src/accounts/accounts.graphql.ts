export const accountsTypeDefs = /* GraphQL */ `
  enum AccountType {
    CASH
    MARGIN
  }

  enum AccountStatus {
    ACTIVE
    RESTRICTED
    CLOSED
  }

  "A brokerage account. Owned by this subgraph; banking and oms add fields to it."
  type Account @key(fields: "id") {
    id: ID!
    number: String!
    type: AccountType!
    status: AccountStatus!
    "ISO 4217"
    baseCurrency: String!
    "RFC 3339, UTC"
    createdAt: String!
  }

  type Query {
    "The caller's accounts."
    accounts: [Account!]!
    "One of the caller's accounts; null when it is not theirs."
    account(id: ID!): Account
  }
`;
