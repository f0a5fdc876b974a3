import { componentSchemas, headers } from './components';
import { paths } from './paths';
import { securitySchemes, servers } from './security';

/**
 * The OpenAPI 3.1 description of the REST surface, served at /v1/openapi.json with
 * interactive docs at /docs, and the source of the generated client (tools/api-client).
 * Its schemas are made from the zod contract the facade validates with (../contract); tests
 * validate real responses against it.
 */
export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Trading API',
    version: '1.0.0',
    description:
      "Delegated-access trading API. Vendor apps act for a user with their consent (OAuth 2.0 authorization code with PKCE); users' own scripts use a personal access token, exchanged for a session at `POST /pat/login`. Money amounts have the currency's minor units, prices at least the tick precision, all as strings; times are RFC 3339 UTC; currencies ISO 4217. Errors are application/problem+json with a stable `code` and the `field` at fault. A query parameter an operation does not take is refused (400 `BAD_USER_INPUT`, `field` naming it), so a misspelt filter never widens an answer. `OPTIONS` on any path answers 204 with `Allow` for any valid token, READ_ONLY included.\n\n**Limits.** Authenticated requests are counted per token (300 a minute by default; order placements have a tighter budget of their own), per vendor app over all its users' grants (6,000 a minute) and per user over all their tokens, never per client address. Requests with no valid token are counted per client address (1,200 a minute) as a flood guard. Every answer carries the tightest budget it used in `RateLimit-*` and `X-RateLimit-*`; `X-RateLimit-Budget` and `RateLimit-Policy` name it (`token`, `app`, `user`, `orders`, `user-orders`, `address`), and a 429 also says it in the problem's `budget`.",
  },
  servers,
  tags: [
    { name: 'OAuth', description: 'Tokens for vendor apps' },
    { name: 'PATs', description: 'Personal access token sessions' },
    { name: 'Accounts', description: 'Accounts, positions, margin and portfolios' },
    { name: 'Banking', description: 'Cash balances, activity, deposits and withdrawals' },
    { name: 'Orders', description: 'Order rules, what-if, orders, trades and live order events' },
    { name: 'Market data', description: 'Quotes, price bars, the market clock and calendar, instruments and live quotes (read:market)' },
    {
      name: 'Sandbox',
      description:
        "DEV tokens only: drive the caller's own working orders (fill in part or in full, reject, expire) and pending transfers (fail) to an outcome on demand, to test what an app does with each",
    },
  ],
  components: {
    securitySchemes,
    headers,
    schemas: componentSchemas(),
  },
  paths,
};
