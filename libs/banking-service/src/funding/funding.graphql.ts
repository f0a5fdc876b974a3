export const fundingTypeDefs = /* GraphQL */ `
  "The direction of a funding transaction."
  enum FundingType {
    "From the bank into the account."
    DEPOSIT
    "From the account to the bank."
    WITHDRAWAL
  }

  "PENDING until clearing completes or rejects it, or the owner cancels it."
  enum FundingState {
    "Waiting for clearing; the owner may cancel it."
    PENDING
    "Cleared: the cash has moved."
    COMPLETED
    "Cancelled by the owner before clearing."
    CANCELLED
    "Refused by clearing: no cash moved."
    REJECTED
  }

  "Sandbox test hook: how simulated clearing should end this transaction."
  enum SandboxOutcome {
    "Clear it normally."
    COMPLETED
    "Make clearing reject it."
    REJECTED
  }

  "Money moving between the account and the customer's bank. Amounts have 2 decimals; times are RFC 3339 UTC."
  type FundingTransaction {
    "The transaction id (UUID)."
    id: ID!
    "The account it funds or draws from."
    accountId: ID!
    "Deposit or withdrawal."
    type: FundingType!
    "Where it is in clearing."
    state: FundingState!
    "Positive, in the currency's minor units."
    amount: Decimal!
    "ISO 4217"
    currency: String!
    "Free text the customer gave."
    reference: String
    "Why clearing rejected it."
    rejectReason: String
    "When it was requested."
    createdAt: DateTime!
    "When it last changed."
    updatedAt: DateTime!
    "When clearing completed it."
    completedAt: DateTime
    "When the owner cancelled it."
    cancelledAt: DateTime
    "When clearing rejected it."
    rejectedAt: DateTime
  }

  "One page of funding transactions."
  type FundingTransactionConnection {
    "The transactions on this page."
    nodes: [FundingTransaction!]!
    "Null on the last page."
    nextCursor: String
  }

  "A deposit or withdrawal to request."
  input FundingInput {
    "One of the caller's accounts."
    accountId: ID!
    "Greater than zero, at most the currency's minor units of decimals (2 for USD, none for JPY) and 12 integer digits."
    amount: Decimal!
    "ISO 4217"
    currency: String!
    "Free text shown on the transaction (at most 140 characters)."
    reference: String
    "Sandbox only: force the clearing outcome (REJECTED tests the rejection path)."
    sandboxOutcome: SandboxOutcome
  }

  extend type Account {
    "Deposits and withdrawals, newest first."
    fundingTransactions(
      "Page size: 1..100, default 20." limit: Int
      "The previous page's nextCursor; omit for the first page." cursor: String
      "From: a date (the whole day included) or an RFC 3339 time." from: String
      "Up to: a date (the whole day included) or an RFC 3339 time." to: String
      "Only deposits or only withdrawals." type: FundingType
      "Only transactions in this state." state: FundingState
    ): FundingTransactionConnection!
  }

  type Mutation {
    "A pending deposit; clearing credits the cash when it completes."
    deposit("What to deposit." input: FundingInput!, "An Idempotency-Key: the same key and input answer the first result; another input with it is refused." idempotencyKey: String): FundingTransaction!
    "A pending withdrawal; its amount is held from available-to-withdraw cash at once."
    withdraw("What to withdraw." input: FundingInput!, "An Idempotency-Key: the same key and input answer the first result; another input with it is refused." idempotencyKey: String): FundingTransaction!
    "Cancels a PENDING transaction (a withdrawal's held cash is released)."
    cancelFundingTransaction("The PENDING transaction." transactionId: ID!, "An Idempotency-Key: the same key and input answer the first result; another input with it is refused." idempotencyKey: String): FundingTransaction!
  }
`;
