export const fundingTypeDefs = /* GraphQL */ `
  enum FundingType {
    DEPOSIT
    WITHDRAWAL
  }

  "PENDING until clearing completes or rejects it, or the owner cancels it."
  enum FundingState {
    PENDING
    COMPLETED
    CANCELLED
    REJECTED
  }

  "Sandbox test hook: how simulated clearing should end this transaction."
  enum SandboxOutcome {
    COMPLETED
    REJECTED
  }

  "Money moving between the account and the customer's bank. Amounts have 2 decimals; times are RFC 3339 UTC."
  type FundingTransaction {
    id: ID!
    accountId: ID!
    type: FundingType!
    state: FundingState!
    amount: String!
    "ISO 4217"
    currency: String!
    reference: String
    rejectReason: String
    createdAt: String!
    updatedAt: String!
    completedAt: String
    cancelledAt: String
    rejectedAt: String
  }

  type FundingTransactionConnection {
    nodes: [FundingTransaction!]!
    nextCursor: String
  }

  input FundingInput {
    accountId: ID!
    "A decimal string > 0, at most 2 decimals (JPY: none) and 15 integer digits."
    amount: String!
    "ISO 4217"
    currency: String!
    "Free text shown on the transaction (at most 140 characters)."
    reference: String
    "Sandbox only: force the clearing outcome (REJECTED tests the rejection path)."
    sandboxOutcome: SandboxOutcome
  }

  extend type Account {
    "Deposits and withdrawals, newest first."
    fundingTransactions(limit: Int, cursor: String, from: String, to: String, type: FundingType, state: FundingState): FundingTransactionConnection!
  }

  type Mutation {
    "A pending deposit; clearing credits the cash when it completes."
    deposit(input: FundingInput!, idempotencyKey: String): FundingTransaction!
    "A pending withdrawal; its amount is held from available-to-withdraw cash at once."
    withdraw(input: FundingInput!, idempotencyKey: String): FundingTransaction!
    "Cancels a PENDING transaction (a withdrawal's held cash is released)."
    cancelFundingTransaction(transactionId: ID!, idempotencyKey: String): FundingTransaction!
  }
`;
