export const activityTypeDefs = /* GraphQL */ `
  enum CashActivityType {
    DEPOSIT
    WITHDRAWAL
    TRADE
    FEE
  }

  "One movement of the account's cash (holds are not movements: they only reserve cash)."
  type CashActivity {
    "The journal entry that moved the cash."
    id: ID!
    type: CashActivityType!
    "ISO 4217"
    currency: String!
    "Signed: positive in, negative out."
    amount: String!
    "The account's cash in this currency after this movement."
    balanceAfter: String!
    description: String!
    "The funding transaction behind a deposit or withdrawal."
    transactionId: ID
    "RFC 3339, UTC"
    occurredAt: String!
  }

  type CashActivityConnection {
    nodes: [CashActivity!]!
    nextCursor: String
  }

  extend type Account {
    "Every cash movement, newest first, with the running balance per currency."
    cashActivity(limit: Int, cursor: String, from: String, to: String, type: CashActivityType): CashActivityConnection!
  }
`;
