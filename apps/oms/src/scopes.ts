import type { ScopeRules } from '@trading/subgraph';

/**
 * Who may read what in this subgraph (spec §2.2). Every root field must appear here. The market
 * fields serve account valuation, so they need read:accounts rather than read:orders.
 */
export const omsScopes: ScopeRules = {
  'Query.instruments': ['read:orders'],
  'Account.orders': ['read:orders'],
  'Account.market': ['read:accounts'],
  'Position.lastPrice': ['read:accounts'],
  'Position.previousClose': ['read:accounts'],
};
