import { SCOPE_DESCRIPTIONS } from '@trading/auth';
import { z } from '@trading/config';
import { contract } from '../contract';
import { accountId, idempotency, list, type Op, type Operations } from './kit';
import { marketOperations } from './market.openapi';
import { oauthPaths } from './oauth.openapi';
import { orderOperations } from './orders.openapi';

/**
 * The OpenAPI 3.1 description of the REST surface, served at /v1/openapi.json with
 * interactive docs at /docs, and the source of the generated client (tools/api-client).
 * Its schemas are made from the zod contract the facade validates with (../contract); tests
 * validate real responses against it.
 */
const idempotencyKey = idempotency(
  'A retry with the same key and body returns the first result; the same key with another body is refused (422).',
);

const PROBLEM_TEXT: Record<number, string> = {
  400: 'Bad input (the `field` says which), or a query parameter the operation does not take (`field` names it)',
  401: 'Missing, invalid, expired or revoked token',
  403: 'Insufficient scope, READ_ONLY token on a write, or address not allowed',
  404: "Not found (also another user's account)",
  409: 'Conflict with the current state',
  415: 'Body is not JSON',
  422: 'Well-formed but refused (e.g. insufficient funds, idempotency key reused)',
  429: 'Rate limited',
  503: 'Temporarily unavailable (a dependency is restarting or busy): nothing was changed; retry after `Retry-After` seconds, with the same `Idempotency-Key` for money-moving requests',
};

const operations: Operations = {
  '/pat/login': {
    post: {
      summary: 'Exchange a personal access token for a short-lived session JWT',
      public: true,
      body: 'PatLoginRequest',
      ok: { status: 200, schema: 'PatLoginResponse' },
      errors: [400, 401, 429],
    },
  },
  '/pat/revoke': {
    post: {
      summary:
        "Revoke one of the caller's PATs; every session made from it ends at once (repeating is harmless). A PAT session only: a vendor app's token gets 403 PAT_SESSION_REQUIRED",
      scopes: ['write:accounts'],
      patSessionOnly: true,
      body: 'PatRevokeRequest',
      ok: { status: 200, schema: 'PatRevokeResponse' },
      errors: [400, 404],
    },
  },
  '/pat/login-activity': {
    get: {
      summary:
        "The caller's PAT logins, newest first, failures included. A PAT session only: a vendor app's token gets 403 PAT_SESSION_REQUIRED",
      scopes: ['read:accounts'],
      patSessionOnly: true,
      params: list,
      ok: { status: 200, schema: 'PatLoginActivityPage' },
      errors: [400],
    },
  },
  '/accounts': {
    get: { summary: "The caller's accounts, with their settings", scopes: ['read:accounts'], ok: { status: 200, schema: 'AccountList' } },
  },
  '/accounts/{accountId}': {
    get: {
      summary: "One of the caller's accounts, with its settings",
      scopes: ['read:accounts'],
      params: [accountId],
      ok: { status: 200, schema: 'Account' },
      errors: [400, 404],
    },
    patch: {
      summary:
        "Change the account's settings: `nickname` (1 to 64 characters once trimmed; null clears it) and `tradeConfirmationEmails`. A field left out keeps its value; an unknown field, or a field of the wrong type, is a 400 naming it. Answers the settings as they now are",
      scopes: ['write:accounts'],
      params: [accountId],
      body: 'AccountSettingsRequest',
      ok: { status: 200, schema: 'AccountSettings' },
      errors: [400, 404, 415],
    },
  },
  '/accounts/{accountId}/positions': {
    get: {
      summary: 'Every open holding, by symbol (closed ones, quantity 0, with `includeClosed=true`)',
      scopes: ['read:accounts'],
      params: [
        accountId,
        ...list.slice(0, 2),
        {
          name: 'includeClosed',
          in: 'query',
          schema: { type: 'boolean', default: false },
          description: 'Also the holdings closed out (quantity 0), which keep their realised P&L; the cursor belongs to the same choice',
        },
      ],
      ok: { status: 200, schema: 'PositionPage' },
      errors: [400, 404],
    },
  },
  '/accounts/{accountId}/position': {
    get: {
      summary: 'One holding, by symbol',
      scopes: ['read:accounts'],
      params: [accountId, { name: 'symbol', in: 'query', required: true, schema: { type: 'string' }, description: 'e.g. AAPL' }],
      ok: { status: 200, schema: 'Position' },
      errors: [400, 404],
    },
  },
  '/accounts/{accountId}/margin': {
    get: {
      summary: 'Equity, requirements, excess liquidity and buying power',
      scopes: ['read:accounts'],
      params: [accountId],
      ok: { status: 200, schema: 'Margin' },
      errors: [400, 404],
    },
  },
  '/accounts/{accountId}/portfolios': {
    get: {
      summary: 'Holdings summarised per currency, with allocation and day change',
      scopes: ['read:accounts'],
      params: [accountId],
      ok: { status: 200, schema: 'PortfolioSummary' },
      errors: [400, 404],
    },
  },
  '/accounts/{accountId}/activities': {
    get: {
      summary:
        "One feed of the account's fills, deposits, withdrawals and fees (commissions, which banking books as cash movements of their own), newest first; at the same moment FILL, DEPOSIT, WITHDRAWAL, FEE, then by id. A fill's cash leg is not listed again (it is the FILL), nor is a sale's settlement (it only moves cash from unsettled to settled). Needs both read:orders and read:banking. A page may hold fewer than `limit` items: follow `nextPageToken` until it is null",
      scopes: ['read:orders', 'read:banking'],
      params: [
        accountId,
        list[0]!,
        {
          name: 'pageToken',
          in: 'query',
          schema: { type: 'string' },
          description: '`nextPageToken` of the previous page, with the same `types` and `from`',
        },
        ...list.slice(2),
        {
          name: 'types',
          in: 'query',
          schema: { type: 'string', examples: ['FILL,DEPOSIT'] },
          description: 'Only these types, comma-separated: FILL, DEPOSIT, WITHDRAWAL, FEE (default: all)',
        },
      ],
      ok: { status: 200, schema: 'ActivityPage' },
      errors: [400, 404, 422],
    },
  },
  '/banking/{accountId}/balance': {
    get: {
      summary: 'Cash balances in every currency, with pending deposits (`pendingIn`) and withdrawals (`pendingOut`)',
      scopes: ['read:banking'],
      params: [accountId],
      ok: { status: 200, schema: 'BalanceList' },
      errors: [400, 404],
    },
  },
  '/banking/{accountId}/balance/{ccy}': {
    get: {
      summary: 'Cash balance in one currency, with pending deposits (`pendingIn`) and withdrawals (`pendingOut`)',
      scopes: ['read:banking'],
      params: [accountId, { name: 'ccy', in: 'path', required: true, schema: { type: 'string', pattern: '^[A-Za-z]{3}$' } }],
      ok: { status: 200, schema: 'AccountCashBalance' },
      errors: [400, 404],
    },
  },
  '/banking/{accountId}/activity': {
    get: {
      summary: 'Every cash movement with its running balance, newest first',
      scopes: ['read:banking'],
      params: [accountId, ...list, { name: 'type', in: 'query', schema: { enum: ['DEPOSIT', 'WITHDRAWAL', 'TRADE', 'FEE'] } }],
      ok: { status: 200, schema: 'CashActivityPage' },
      errors: [400, 404],
    },
  },
  '/banking/{accountId}/txn-activity': {
    get: {
      summary: 'Funding transactions with their states, newest first',
      scopes: ['read:banking'],
      params: [
        accountId,
        ...list,
        { name: 'type', in: 'query', schema: { enum: ['DEPOSIT', 'WITHDRAWAL'] } },
        { name: 'state', in: 'query', schema: { enum: ['PENDING', 'COMPLETED', 'CANCELLED', 'REJECTED'] } },
      ],
      ok: { status: 200, schema: 'FundingTransactionPage' },
      errors: [400, 404],
    },
  },
  '/banking/deposit': {
    post: {
      summary: 'Deposit cash (PENDING until cleared)',
      scopes: ['write:banking'],
      params: [idempotencyKey],
      body: 'FundingRequest',
      ok: { status: 201, schema: 'FundingTransaction' },
      errors: [400, 404, 415, 422],
    },
  },
  '/banking/withdraw': {
    post: {
      summary: 'Withdraw cash available to withdraw (held while PENDING)',
      scopes: ['write:banking'],
      params: [idempotencyKey],
      body: 'FundingRequest',
      ok: { status: 201, schema: 'FundingTransaction' },
      errors: [400, 404, 415, 422],
    },
  },
  '/banking/cancel-txn': {
    post: {
      summary: 'Cancel a PENDING funding transaction',
      scopes: ['write:banking'],
      params: [idempotencyKey],
      body: 'CancelFundingRequest',
      ok: { status: 200, schema: 'FundingTransaction' },
      errors: [400, 404, 409, 415, 422],
    },
  },
};
// The orders' operations, merged path by path (closing positions adds DELETE to an accounts path).
for (const [path, ops] of Object.entries(orderOperations)) operations[path] = { ...operations[path], ...ops };
Object.assign(operations, marketOperations);

/** Every operation's stable name in generated clients. */
const OPERATION_IDS: Record<string, string> = {
  'POST /pat/login': 'patLogin',
  'POST /pat/revoke': 'revokePat',
  'GET /pat/login-activity': 'listPatLogins',
  'GET /accounts': 'listAccounts',
  'GET /accounts/{accountId}': 'getAccount',
  'PATCH /accounts/{accountId}': 'updateAccountSettings',
  'GET /accounts/{accountId}/positions': 'listPositions',
  'GET /accounts/{accountId}/position': 'getPosition',
  'GET /accounts/{accountId}/margin': 'getMargin',
  'GET /accounts/{accountId}/portfolios': 'getPortfolios',
  'GET /accounts/{accountId}/activities': 'listActivities',
  'GET /banking/{accountId}/balance': 'listBalances',
  'GET /banking/{accountId}/balance/{ccy}': 'getBalance',
  'GET /banking/{accountId}/activity': 'listCashActivity',
  'GET /banking/{accountId}/txn-activity': 'listFundingTransactions',
  'POST /banking/deposit': 'deposit',
  'POST /banking/withdraw': 'withdraw',
  'POST /banking/cancel-txn': 'cancelFundingTransaction',
  'GET /oms/{accountId}/order/rules': 'getOrderRules',
  'POST /oms/what-if': 'previewOrder',
  'POST /oms/order': 'placeOrder',
  'DELETE /oms/order': 'cancelOrder',
  'PUT /oms/order': 'replaceOrder',
  'DELETE /accounts/{accountId}/positions/{symbol}': 'closePosition',
  'DELETE /accounts/{accountId}/positions': 'closeAllPositions',
  'GET /oms/{accountId}/orders': 'listOrders',
  'GET /oms/{accountId}/order/{orderId}': 'getOrder',
  'GET /oms/{accountId}/order/by-client-id/{clientOrderId}': 'getOrderByClientOrderId',
  'DELETE /oms/{accountId}/order/by-client-id/{clientOrderId}': 'cancelOrderByClientOrderId',
  'GET /oms/{accountId}/events': 'streamOrderEvents',
  'GET /oms/{accountId}/trades': 'listTrades',
  'GET /market/quotes': 'getQuotes',
  'GET /market/bars': 'getMultiBars',
  'GET /market/bars/{symbol}': 'getBars',
  'GET /market/clock': 'getMarketClock',
  'GET /market/calendar': 'getMarketCalendar',
  'GET /market/instruments': 'listInstruments',
  'GET /market/instruments/{symbol}': 'getInstrument',
  'GET /market/events': 'streamQuotes',
};
const TAGS: Record<string, string> = { pat: 'PATs', accounts: 'Accounts', banking: 'Banking', oms: 'Orders', market: 'Market data' };

const problemResponse = (status: number) => ({
  description: PROBLEM_TEXT[status] ?? 'Error',
  ...(status === 429 ? { headers: { 'Retry-After': { $ref: '#/components/headers/Retry-After' }, ...RATE_LIMIT_HEADERS } } : {}),
  ...(status === 503 ? { headers: { 'Retry-After': { $ref: '#/components/headers/Retry-After' } } } : {}),
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

/** Every authenticated answer carries the tightest budget it used. */
const RATE_LIMIT_HEADERS = Object.fromEntries(
  [
    'RateLimit-Limit',
    'RateLimit-Remaining',
    'RateLimit-Reset',
    'RateLimit-Policy',
    'X-RateLimit-Limit',
    'X-RateLimit-Remaining',
    'X-RateLimit-Reset',
    'X-RateLimit-Budget',
  ].map((h) => [h, { $ref: `#/components/headers/${h}` }]),
);

function operation(method: string, path: string, op: Op) {
  const operationId = OPERATION_IDS[`${method.toUpperCase()} ${path}`];
  if (!operationId) throw new Error(`no operationId for ${method.toUpperCase()} ${path}`);
  // Any authenticated operation refuses a query parameter it does not take (400).
  const statuses = [...new Set([...(op.public ? [] : [400, 401, 403]), ...(op.errors ?? []), ...(op.public ? [] : [429]), 503])].sort();
  return {
    operationId,
    tags: [TAGS[path.split('/')[1]!]!],
    summary: op.summary,
    ...(op.scopes ? { description: `Scopes: ${op.scopes.join(', ')}` } : {}),
    security: op.public ? [] : op.patSessionOnly ? [{ patSession: [] }] : [{ oauth2: op.scopes ?? [] }, { patSession: [] }],
    parameters: op.params ?? [],
    ...(op.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${op.body}` } } } } }
      : {}),
    responses: {
      [op.ok.status]: {
        description: op.ok.description ?? 'OK',
        ...(op.public ? {} : { headers: RATE_LIMIT_HEADERS }),
        content: { [op.ok.mediaType ?? 'application/json']: { schema: { $ref: `#/components/schemas/${op.ok.schema}` } } },
      },
      ...Object.fromEntries(statuses.map((s) => [s, problemResponse(s)])),
    },
  };
}

/** The contract's named schemas as OpenAPI components (JSON Schema 2020-12, which OpenAPI 3.1 uses). */
function componentSchemas(): Record<string, unknown> {
  const { schemas } = z.toJSONSchema(contract, { target: 'draft-2020-12', uri: (id) => `#/components/schemas/${id}` }) as {
    schemas: Record<string, Record<string, unknown>>;
  };
  return Object.fromEntries(Object.entries(schemas).map(([name, { $schema: _s, $id: _i, ...schema }]) => [name, schema]));
}

const header = (description: string, schema: Record<string, unknown> = { type: 'integer', minimum: 0 }) => ({ description, schema });

export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Trading API',
    version: '1.0.0',
    description:
      "Delegated-access trading API. Vendor apps act for a user with their consent (OAuth 2.0 authorization code with PKCE); users' own scripts use a personal access token, exchanged for a session at `POST /pat/login`. Money amounts have the currency's minor units, prices at least the tick precision, all as strings; times are RFC 3339 UTC; currencies ISO 4217. Errors are application/problem+json with a stable `code` and the `field` at fault. A query parameter an operation does not take is refused (400 `BAD_USER_INPUT`, `field` naming it), so a misspelt filter never widens an answer. `OPTIONS` on any path answers 204 with `Allow` for any valid token, READ_ONLY included.\n\n**Limits.** Authenticated requests are counted per token (300 a minute by default; order placements have a tighter budget of their own), per vendor app over all its users' grants (6,000 a minute) and per user over all their tokens, never per client address. Requests with no valid token are counted per client address (1,200 a minute) as a flood guard. Every answer carries the tightest budget it used in `RateLimit-*` and `X-RateLimit-*`; `X-RateLimit-Budget` and `RateLimit-Policy` name it (`token`, `app`, `user`, `orders`, `user-orders`, `address`), and a 429 also says it in the problem's `budget`.",
  },
  // {base_url}: each deployment serves the document with its own (docs.ts, FACADE_PUBLIC_URL).
  servers: [
    {
      url: '{base_url}',
      description: "The API's public base URL",
      variables: { base_url: { default: 'http://localhost:8080/v1', description: 'e.g. https://api.trading.example/v1' } },
    },
  ],
  tags: [
    { name: 'OAuth', description: 'Tokens for vendor apps' },
    { name: 'PATs', description: 'Personal access token sessions' },
    { name: 'Accounts', description: 'Accounts, positions, margin and portfolios' },
    { name: 'Banking', description: 'Cash balances, activity, deposits and withdrawals' },
    { name: 'Orders', description: 'Order rules, what-if, orders, trades and live order events' },
    { name: 'Market data', description: 'Quotes, price bars, the market clock and calendar, instruments and live quotes (read:market)' },
  ],
  components: {
    securitySchemes: {
      oauth2: {
        type: 'oauth2',
        description:
          'Vendor apps: authorization code with PKCE (S256 only); access tokens live an hour, refresh tokens rotate on every use. ' +
          'Sender-constrained tokens (DPoP, RFC 9449): send a `DPoP` proof header (a JWT of typ dpop+jwt signed with ES256, EdDSA, PS256 or RS256 by your key, its public key in `jwk`) with the token request, and the tokens are bound to that key (`token_type: DPoP`, `cnf.jkt`); then every call sends `Authorization: DPoP <token>` and a fresh proof with `htm`, `htu` (the public URL of the request, without query), `iat`, a unique `jti` and `ath` (base64url SHA-256 of the token). A bound token sent as Bearer, or with a bad proof, is refused 401 with `WWW-Authenticate: DPoP`.',
        flows: {
          authorizationCode: {
            authorizationUrl: '/v1/oauth/authorize',
            tokenUrl: '/v1/oauth/token',
            refreshUrl: '/v1/oauth/token',
            scopes: SCOPE_DESCRIPTIONS,
          },
        },
      },
      patSession: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description:
          'Users\' own scripts: a PAT session. POST /pat/login with your personal access token (`{ "token": "tpat_…" }`) and paste the returned `token` here: a session JWT (15 minutes by default), not the PAT itself. A READ_ONLY token may only read. A login sent with a DPoP proof (htu: the public /v1/pat/login URL) gets a session bound to that key, used as `Authorization: DPoP` with a proof per call, as for OAuth tokens.',
      },
    },
    headers: {
      'RateLimit-Limit': header('Requests allowed in the window of the tightest budget this request used'),
      'RateLimit-Remaining': header('Requests left in that window'),
      'RateLimit-Reset': header('Seconds until that window ends'),
      'RateLimit-Policy': header('The budget by name, its quota and window in seconds, e.g. `"token";q=300;w=60`', { type: 'string' }),
      'X-RateLimit-Limit': header('As RateLimit-Limit'),
      'X-RateLimit-Remaining': header('As RateLimit-Remaining'),
      'X-RateLimit-Reset': header('When that window ends, as a Unix time in seconds'),
      'X-RateLimit-Budget': header('Which budget this is: token, app, user, orders, user-orders or address', {
        type: 'string',
        enum: ['token', 'app', 'user', 'orders', 'user-orders', 'address'],
      }),
      'Retry-After': header('Seconds to wait before trying again'),
    },
    schemas: componentSchemas(),
  },
  paths: {
    ...oauthPaths,
    ...Object.fromEntries(
      Object.entries(operations).map(([path, ops]) => [
        path,
        Object.fromEntries(Object.entries(ops).map(([m, op]) => [m, operation(m, path, op!)])),
      ]),
    ),
  },
};
