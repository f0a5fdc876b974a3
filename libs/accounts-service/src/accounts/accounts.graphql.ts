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
    "The owner's own name for the account (1 to 64 characters); null when none is set."
    nickname: String
    "Whether each fill is confirmed by email (true unless the owner turned it off)."
    tradeConfirmationEmails: Boolean!
  }

  "An account's settings as they are after a change."
  type AccountSettings {
    "The account id (UUID)."
    accountId: ID!
    "The owner's own name for the account; null when none is set."
    nickname: String
    "Whether each fill is confirmed by email."
    tradeConfirmationEmails: Boolean!
  }

  "What to change; a field left out keeps its value. At least one field."
  input AccountSettingsInput {
    "1 to 64 characters once trimmed (no control characters); null clears it."
    nickname: String
    "Whether each fill is confirmed by email; not null."
    tradeConfirmationEmails: Boolean
  }

  type Query {
    "The caller's accounts."
    accounts: [Account!]!
    "One of the caller's accounts; null when it is not theirs."
    account("The account id." id: ID!): Account
  }

  type Mutation {
    "Changes settings of one of the caller's accounts (NOT_FOUND naming accountId when it is not theirs)."
    updateAccountSettings("The account id." accountId: ID!, "What to change." input: AccountSettingsInput!): AccountSettings!
  }
`;
