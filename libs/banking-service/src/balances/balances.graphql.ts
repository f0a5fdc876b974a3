export const balancesTypeDefs = /* GraphQL */ `
  "Cash in one currency, derived from the double-entry ledger. Decimals are strings with 2 decimals."
  type CashBalance {
    "ISO 4217"
    currency: String!
    "Everything the account holds in this currency: settledCash + unsettledCash."
    cash: Decimal!
    "Cash that has settled (free or held)."
    settledCash: Decimal!
    "Trade proceeds not yet settled."
    unsettledCash: Decimal!
    "Reserved for open orders and pending withdrawals."
    held: Decimal!
    "What new orders may spend: free settled cash plus unsettled proceeds."
    availableToTrade: Decimal!
    "What a withdrawal may take: free settled cash."
    availableToWithdraw: Decimal!
    "Deposits not yet cleared (PENDING): not in cash until they clear."
    pendingIn: Decimal!
    "Withdrawals not yet paid out (PENDING): still in cash, and held."
    pendingOut: Decimal!
  }

  type Account @key(fields: "id") {
    "The account id (UUID)."
    id: ID!
    "Every currency with any activity, ordered by currency."
    balances: [CashBalance!]!
    "One currency (ISO 4217); zeros for a currency never used."
    balance("ISO 4217, e.g. USD." currency: String!): CashBalance!
    """
    Cash per currency for valuing the account (margin, portfolios): what an account-level read
    needs (read:accounts or read:banking), so margin never asks its caller for banking's scope.
    """
    cashForValuation: [CashBalance!]! @inaccessible
  }
`;
