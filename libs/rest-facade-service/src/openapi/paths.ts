/**
 * The document's paths: every domain's operations, each turned into an OpenAPI operation with
 * its stable name, tag, security and answers (the success, then a problem per error status).
 */
import { accountOperations, patOperations } from './accounts.openapi';
import { bankingOperations } from './banking.openapi';
import { RATE_LIMIT_HEADERS } from './components';
import type { Op, Operations } from './kit';
import { marketOperations } from './market.openapi';
import { oauthPaths } from './oauth.openapi';
import { orderOperations } from './orders.openapi';
import { sandboxOperations } from './sandbox.openapi';
import { webhookPaths } from './webhooks.openapi';

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

const operations: Operations = { ...patOperations, ...accountOperations, ...bankingOperations };
// The orders' operations, merged path by path (closing positions adds DELETE to an accounts path).
for (const [path, ops] of Object.entries(orderOperations)) operations[path] = { ...operations[path], ...ops };
Object.assign(operations, marketOperations, sandboxOperations);

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
  'POST /sandbox/orders/{orderId}/fill': 'sandboxFillOrder',
  'POST /sandbox/orders/{orderId}/reject': 'sandboxRejectOrder',
  'POST /sandbox/orders/{orderId}/expire': 'sandboxExpireOrder',
  'POST /sandbox/funding/{transactionId}/fail': 'sandboxFailFundingTransaction',
};
const TAGS: Record<string, string> = {
  pat: 'PATs',
  accounts: 'Accounts',
  banking: 'Banking',
  oms: 'Orders',
  market: 'Market data',
  sandbox: 'Sandbox',
};

const problemResponse = (status: number) => ({
  description: PROBLEM_TEXT[status] ?? 'Error',
  ...(status === 429 ? { headers: { 'Retry-After': { $ref: '#/components/headers/Retry-After' }, ...RATE_LIMIT_HEADERS } } : {}),
  ...(status === 503 ? { headers: { 'Retry-After': { $ref: '#/components/headers/Retry-After' } } } : {}),
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

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
      ? {
          requestBody: {
            required: !op.bodyOptional,
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${op.body}` } } },
          },
        }
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

export const paths = {
  ...oauthPaths,
  ...webhookPaths,
  ...Object.fromEntries(
    Object.entries(operations).map(([path, ops]) => [
      path,
      Object.fromEntries(Object.entries(ops).map(([m, op]) => [m, operation(m, path, op!)])),
    ]),
  ),
};
