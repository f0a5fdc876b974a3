import { accountId, idempotency, list, type Op, type Operations } from './kit';
import { oauthPaths } from './oauth.openapi';
import { orderOperations } from './orders.openapi';
import { schemas } from './schemas';

/**
 * The OpenAPI 3.1 description of the REST surface, served at /v1/openapi.json with
 * interactive docs at /docs. Tests validate real responses against it.
 */
const idempotencyKey = idempotency('A retry with the same key and body returns the first result; the same key with another body is refused (422).');

const PROBLEM_TEXT: Record<number, string> = {
  400: 'Bad input (the `field` says which)',
  401: 'Missing, invalid, expired or revoked token',
  403: 'Insufficient scope, READ_ONLY token on a write, or address not allowed',
  404: "Not found (also another user's account)",
  409: 'Conflict with the current state',
  415: 'Body is not JSON',
  422: 'Well-formed but refused (e.g. insufficient funds, idempotency key reused)',
  429: 'Rate limited',
  503: 'Temporarily unavailable',
};

const operations: Operations = {
  '/pat/login': {
    post: { summary: 'Exchange a personal access token for a short-lived session JWT', public: true, body: 'PatLoginRequest', ok: { status: 200, schema: 'PatLoginResponse' }, errors: [400, 401, 429] },
  },
  '/pat/revoke': {
    post: {
      summary: "Revoke one of the caller's PATs; every session made from it ends at once (repeating is harmless). A PAT session only: a vendor app's token gets 403 PAT_SESSION_REQUIRED",
      scopes: ['write:accounts'],
      body: 'PatRevokeRequest',
      ok: { status: 200, schema: 'PatRevokeResponse' },
      errors: [400, 404],
    },
  },
  '/pat/login-activity': {
    get: {
      summary: "The caller's PAT logins, newest first, failures included. A PAT session only: a vendor app's token gets 403 PAT_SESSION_REQUIRED",
      scopes: ['read:accounts'],
      params: list,
      ok: { status: 200, schema: 'PatLoginActivityPage' },
      errors: [400],
    },
  },
  '/accounts': { get: { summary: "The caller's accounts", scopes: ['read:accounts'], ok: { status: 200, schema: 'AccountList' } } },
  '/accounts/{accountId}/positions': {
    get: { summary: 'Every holding, by symbol', scopes: ['read:accounts'], params: [accountId, ...list.slice(0, 2)], ok: { status: 200, schema: 'PositionPage' }, errors: [400, 404] },
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
    get: { summary: 'Equity, requirements, excess liquidity and buying power', scopes: ['read:accounts'], params: [accountId], ok: { status: 200, schema: 'Margin' }, errors: [400, 404] },
  },
  '/accounts/{accountId}/portfolios': {
    get: { summary: 'Holdings summarised per currency, with allocation and day change', scopes: ['read:accounts'], params: [accountId], ok: { status: 200, schema: 'PortfolioSummary' }, errors: [400, 404] },
  },
  '/banking/{accountId}/balance': {
    get: { summary: 'Cash balances in every currency', scopes: ['read:banking'], params: [accountId], ok: { status: 200, schema: 'BalanceList' }, errors: [400, 404] },
  },
  '/banking/{accountId}/balance/{ccy}': {
    get: {
      summary: 'Cash balance in one currency',
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
    post: { summary: 'Deposit cash (PENDING until cleared)', scopes: ['write:banking'], params: [idempotencyKey], body: 'FundingRequest', ok: { status: 201, schema: 'FundingTransaction' }, errors: [400, 404, 415, 422] },
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
  ...orderOperations,
};

const problemResponse = (status: number) => ({ description: PROBLEM_TEXT[status] ?? 'Error', content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } });

function operation(op: Op) {
  const statuses = [...new Set([...(op.public ? [] : [401, 403]), ...(op.errors ?? []), 503])].sort();
  return {
    summary: op.summary,
    ...(op.scopes ? { description: `Scopes: ${op.scopes.join(', ')}` } : {}),
    security: op.public ? [] : [{ bearer: op.scopes ?? [] }],
    parameters: op.params ?? [],
    ...(op.body ? { requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${op.body}` } } } } } : {}),
    responses: {
      [op.ok.status]: { description: op.ok.description ?? 'OK', content: { [op.ok.mediaType ?? 'application/json']: { schema: { $ref: `#/components/schemas/${op.ok.schema}` } } } },
      ...Object.fromEntries(statuses.map((s) => [s, problemResponse(s)])),
    },
  };
}

export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Trading API',
    version: '1.0.0',
    description:
      'Delegated-access trading API. Authenticate with an OAuth 2.0 access token or a PAT session JWT (`POST /pat/login`). Decimals are strings, times RFC 3339 UTC, currencies ISO 4217. Errors are application/problem+json.',
  },
  servers: [{ url: '/v1' }],
  components: {
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    schemas,
  },
  paths: {
    ...oauthPaths,
    ...Object.fromEntries(Object.entries(operations).map(([path, ops]) => [path, Object.fromEntries(Object.entries(ops).map(([m, op]) => [m, operation(op!)]))])),
  },
};
