import type { ScopeRules } from '@trading/subgraph';

/** Who may read what in this subgraph (spec §2.2). Every root field must appear here. */
export const omsScopes: ScopeRules = {
  'Query.instruments': ['read:orders'],
  'Account.orders': ['read:orders'],
};
