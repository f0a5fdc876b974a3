import { anyOf, type ScopeRules } from '@trading/subgraph';

/** Who may read what in this subgraph (by API scope). Every root field must appear here. */
export const bankingScopes: ScopeRules = {
  'Account.balances': ['read:banking'],
  'Account.balance': ['read:banking'],
  // What accounts' margin and portfolios @require: their own scope (read:accounts) must be enough.
  'Account.cashForValuation': anyOf('read:accounts', 'read:banking'),
  'Account.cashActivity': ['read:banking'],
  'Account.fundingTransactions': ['read:banking'],
  'Mutation.deposit': ['write:banking'],
  'Mutation.withdraw': ['write:banking'],
  'Mutation.cancelFundingTransaction': ['write:banking'],
  // The DEV sandbox fails the caller's own pending transfer, a change like a cancel (the service also wants a DEV token).
  'Mutation.sandboxFailFundingTransaction': ['write:banking'],
};
