export const activityTypeDefs = /* GraphQL */ `
  "What moved the cash."
  enum CashActivityType {
    "Money in from the bank."
    DEPOSIT
    "Money out to the bank."
    WITHDRAWAL
    "A trade's cash effect."
    TRADE
    "A fee charged by the broker."
    FEE
  }

  "One movement of the account's cash (holds are not movements: they only reserve cash)."
  type CashActivity {
    "The journal entry that moved the cash."
    id: ID!
    "What moved the cash."
    type: CashActivityType!
    "ISO 4217"
    currency: String!
    "Signed: positive in, negative out."
    amount: Decimal!
    "The account's cash in this currency after this movement."
    balanceAfter: Decimal!
    "A human-readable line for statements."
    description: String!
    "The funding transaction behind a deposit or withdrawal."
    transactionId: ID
    "RFC 3339, UTC"
    occurredAt: DateTime!
  }

  "One page of cash movements."
  type CashActivityConnection {
    "The movements on this page."
    nodes: [CashActivity!]!
    "Null on the last page."
    nextCursor: String
  }

  extend type Account {
    "Every cash movement, newest first, with the running balance per currency."
    cashActivity(
      "Page size: 1..100, default 20." limit: Int
      "The previous page's nextCursor; omit for the first page." cursor: String
      "From: a date (the whole day included) or an RFC 3339 time." from: String
      "Up to: a date (the whole day included) or an RFC 3339 time." to: String
      "Only movements of this type." type: CashActivityType
    ): CashActivityConnection!
  }
`;
