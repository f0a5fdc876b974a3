import type { ScopeRules } from '@trading/subgraph';

/** Who may read what in this subgraph (spec §2.2). Every root field must appear here. */
export const accountsScopes: ScopeRules = {
  'Query.accounts': ['read:accounts'],
  'Query.account': ['read:accounts'],
  'Account.positions': ['read:accounts'],
};
