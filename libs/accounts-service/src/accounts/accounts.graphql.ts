export const accountsTypeDefs = /* GraphQL */ `
  "Cash or margin: how buying power and margin requirements are reckoned."
  enum AccountType {
    "A cash account: buys are paid in full from cash."
    CASH
    "A Reg T margin account: its buying power counts its holdings (see Margin)."
    MARGIN
  }

  "Whether the account may be used."
  enum AccountStatus {
    "Open for trading and funding."
    ACTIVE
    "Being closed (or held by the broker): no new order or transfer starts; reads still work."
    RESTRICTED
    "Closed: kept for its history."
    CLOSED
  }

  "A brokerage account. Owned by this subgraph; banking and oms add fields to it."
  type Account @key(fields: "id") {
    "The account id (UUID)."
    id: ID!
    "The account number shown to the customer."
    number: String!
    "Cash or margin."
    type: AccountType!
    "Whether the account may be used."
    status: AccountStatus!
    "ISO 4217"
    baseCurrency: String!
    "RFC 3339, UTC"
    createdAt: DateTime!
  }

  type Query {
    "The caller's accounts."
    accounts: [Account!]!
    "One of the caller's accounts; null when it is not theirs."
    account("The account id." id: ID!): Account
  }
`;
