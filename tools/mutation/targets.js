// What `npm run mutation` mutates, and the specs that must notice, in groups. Each file holds a
// rule that guards money or access; each spec exercises its rule directly (against real
// PostgreSQL and Redis where the rule lives in SQL or a Redis script), so a mutant is judged in
// seconds rather than by booting the whole platform. A group's specs are all a mutant in its
// module-level code (a table, a pattern) can be judged by, so groups stay small and related.
//
// Left out on purpose, covered end to end only (too slow to rerun per mutant): the scope tables
// (libs/*-service/src/scopes.ts, data pinned row by row by the platform's authorization table
// spec); the order service's replace, close and cancel paths (orders-*.spec); refresh-token
// rotation (oauth-refresh-binding, oauth-flow and redis-failover specs), whose rules live in a
// Redis script driven through the token endpoint.
module.exports = {
  // The order rules, and each order class's own (its legs, its replaces, trailing stops) in classes/.
  'order-rules': {
    mutate: [
      'libs/money/src/index.ts',
      'libs/oms-service/src/orders/money.ts',
      'libs/oms-service/src/orders/order-rules.ts',
      'libs/oms-service/src/orders/classes/order-classes.ts',
      'libs/oms-service/src/orders/classes/legs.ts',
      'libs/oms-service/src/orders/classes/simple.ts',
      'libs/oms-service/src/orders/classes/bracket.ts',
      'libs/oms-service/src/orders/classes/oco.ts',
      'libs/oms-service/src/orders/classes/oto.ts',
      'libs/oms-service/src/orders/classes/trailing-stop.ts',
    ],
    specs: [
      'libs/money/src/money.spec.ts',
      'libs/oms-service/src/orders/order-rules.spec.ts',
      'libs/oms-service/src/orders/classes/legs.spec.ts',
      'libs/oms-service/src/orders/classes/simple.spec.ts',
      'libs/oms-service/src/orders/classes/bracket.spec.ts',
      'libs/oms-service/src/orders/classes/oco.spec.ts',
      'libs/oms-service/src/orders/classes/oto.spec.ts',
      'libs/oms-service/src/orders/classes/trailing-stop.spec.ts',
    ],
  },
  // A request's credentials: PAT strings, PKCE, client address rules, the scope list, the
  // READ_ONLY method rule, the accounts a token was given and the environment it is from (the sandbox's rule).
  credentials: {
    mutate: [
      'libs/auth/src/scopes.ts',
      'libs/auth/src/claims.ts',
      'libs/auth/src/ip.ts',
      'libs/auth-service/src/oauth/pkce.ts',
      'libs/auth-service/src/pat/pat-token.ts',
    ],
    specs: [
      'libs/auth/src/auth.spec.ts',
      'libs/auth/src/env-claim.spec.ts',
      'libs/auth/src/ip.spec.ts',
      'libs/auth-service/src/oauth/pkce.spec.ts',
      'libs/auth-service/src/pat/pat-token.spec.ts',
    ],
  },
  // private_key_jwt: the client assertions confidential apps authenticate with.
  'client-assertion': {
    mutate: ['libs/auth-service/src/oauth/client-assertion.ts'],
    specs: ['libs/auth-service/src/oauth/client-assertion.spec.ts'],
  },
  // The subgraphs' side: the scope rule on every root field, READ_ONLY sessions and mutations,
  // and whose account a representation names.
  'subgraph-access': {
    mutate: ['libs/subgraph/src/access.ts'],
    specs: ['libs/subgraph/src/subgraph.spec.ts', 'libs/subgraph/src/access.spec.ts'],
  },
  // DPoP proofs: key binding, replay and clock rules.
  dpop: {
    mutate: ['libs/auth/src/dpop.ts'],
    specs: ['libs/auth/src/dpop.spec.ts'],
  },
  // The REST facade's edge: the route, query and OPTIONS guards, authentication and the READ_ONLY method rule.
  'facade-edge': {
    mutate: ['libs/rest-facade-service/src/edge/authenticate.ts', 'libs/rest-facade-service/src/edge/route-guard.ts'],
    specs: ['libs/rest-facade-service/src/edge/facade.spec.ts', 'libs/rest-facade-service/src/edge/route-guard.spec.ts'],
  },
  budgets: {
    mutate: ['libs/rate-limit/src/budget-chain.ts'],
    specs: ['libs/rate-limit/src/rate-limit.spec.ts'],
  },
  ledger: {
    mutate: [
      'libs/banking-service/src/holds/holds.service.ts',
      'libs/banking-service/src/ledger/ledger.ts',
      'libs/banking-service/src/settlement/sale-settlement.ts',
    ],
    specs: [
      'libs/banking-service/src/holds/holds.spec.ts',
      'libs/banking-service/src/ledger/ledger.spec.ts',
      'libs/banking-service/src/settlement/sale-settlement.spec.ts',
    ],
  },
};
