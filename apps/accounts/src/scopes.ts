import type { ScopeRules } from '@trading/subgraph';

/**
 * Who may read what in this subgraph (spec §2.2). Every root field must appear here. Position
 * entity references check read:accounts themselves (positions/resolvers.ts).
 */
export const accountsScopes: ScopeRules = {
  'Query.accounts': ['read:accounts'],
  'Query.account': ['read:accounts'],
  'Account.positions': ['read:accounts'],
  'Account.position': ['read:accounts'],
  'Account.margin': ['read:accounts'],
  'Account.portfolios': ['read:accounts'],
  'Account.positionSettlement': ['read:accounts'],
};
