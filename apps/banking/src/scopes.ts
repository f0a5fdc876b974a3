import type { ScopeRules } from '@trading/subgraph';

/** Who may read what in this subgraph (spec §2.2). Every root field must appear here. */
export const bankingScopes: ScopeRules = {
  'Account.balances': ['read:banking'],
};
