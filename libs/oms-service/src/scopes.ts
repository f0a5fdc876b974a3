import type { ScopeRules } from '@trading/subgraph';

/**
 * Who may read what in this subgraph. Every root field must appear here. The market
 * fields serve account valuation, so they need read:accounts rather than read:orders. What-if
 * is a read (read:orders) shaped as a mutation, so READ_ONLY tokens are refused it like any
 * mutation (READ_ONLY tokens may call no mutation). Market data (quotes, bars, clock, calendar,
 * instruments) is the same for everyone and needs read:market, which every app may ask for.
 */
export const omsScopes: ScopeRules = {
  'Query.instruments': ['read:orders'],
  'Account.orders': ['read:orders'],
  'Account.order': ['read:orders'],
  'Account.orderByClientOrderId': ['read:orders'],
  'Account.trades': ['read:orders'],
  'Account.orderRules': ['read:orders'],
  'Account.market': ['read:accounts'],
  'Position.lastPrice': ['read:accounts'],
  'Position.previousClose': ['read:accounts'],
  'Position.openSellQuantity': ['read:accounts'],
  'Query.marketQuotes': ['read:market'],
  'Query.marketBars': ['read:market'],
  'Query.marketBarSets': ['read:market'],
  'Query.marketClock': ['read:market'],
  'Query.marketCalendar': ['read:market'],
  'Query.marketInstruments': ['read:market'],
  'Query.marketInstrument': ['read:market'],
  'Mutation.whatIfOrder': ['read:orders'],
  'Mutation.placeOrder': ['write:orders'],
  'Mutation.cancelOrder': ['write:orders'],
  'Mutation.cancelOrderByClientOrderId': ['write:orders'],
  'Mutation.replaceOrder': ['write:orders'],
  'Mutation.closePosition': ['write:orders'],
  'Mutation.closeAllPositions': ['write:orders'],
  // The DEV sandbox drives the caller's own orders: an order change like a cancel (the resolvers also want a DEV token).
  'Mutation.sandboxFillOrder': ['write:orders'],
  'Mutation.sandboxRejectOrder': ['write:orders'],
  'Mutation.sandboxExpireOrder': ['write:orders'],
};
