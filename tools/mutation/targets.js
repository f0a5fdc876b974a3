// What `npm run mutation` mutates, and the specs that must notice. Each rule guards money or
// access; each spec exercises its rule directly, against real PostgreSQL and Redis where the rule
// lives in SQL.
module.exports = {
  mutate: [
    'libs/money/src/index.ts',
    'libs/banking-service/src/holds/holds.service.ts',
    'libs/banking-service/src/ledger/ledger.ts',
    'libs/banking-service/src/settlement/sale-settlement.ts',
    'libs/auth/src/dpop.ts',
    'libs/auth/src/ip.ts',
    'libs/auth-service/src/oauth/pkce.ts',
    'libs/auth-service/src/pat/pat-token.ts',
    'libs/rate-limit/src/budget-chain.ts',
  ],
  specs: [
    'libs/money/src/money.spec.ts',
    'libs/banking-service/src/holds/holds.spec.ts',
    'libs/banking-service/src/ledger/ledger.spec.ts',
    'libs/banking-service/src/settlement/sale-settlement.spec.ts',
    'libs/auth/src/dpop.spec.ts',
    'libs/auth/src/ip.spec.ts',
    'libs/auth-service/src/oauth/pkce.spec.ts',
    'libs/auth-service/src/pat/pat-token.spec.ts',
    'libs/rate-limit/src/rate-limit.spec.ts',
  ],
};
