import { anyOf, type ScopeRules } from '@trading/subgraph';

/**
 * Who may read what in this subgraph. Every root field must appear here. Position
 * entity references check read:accounts themselves (positions/resolvers.ts).
 */
export const accountsScopes: ScopeRules = {
  'Query.accounts': ['read:accounts'],
  // Finding one's own account is how every domain's reads start (banking's balances, oms's
  // orders hang off Account), so any read scope may look it up; its own details need read:accounts.
  'Query.account': anyOf('read:accounts', 'read:banking', 'read:orders'),
  'Account.number': ['read:accounts'],
  'Account.type': ['read:accounts'],
  'Account.status': ['read:accounts'],
  'Account.baseCurrency': ['read:accounts'],
  'Account.createdAt': ['read:accounts'],
  'Account.nickname': ['read:accounts'],
  'Account.tradeConfirmationEmails': ['read:accounts'],
  'Account.positions': ['read:accounts'],
  'Account.position': ['read:accounts'],
  'Account.margin': ['read:accounts'],
  'Account.portfolios': ['read:accounts'],
  'Account.positionSettlement': ['read:accounts'],
  // Answers only the settings it changed, so write:accounts alone is enough to make a change.
  'Mutation.updateAccountSettings': ['write:accounts'],
};
