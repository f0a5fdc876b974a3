/**
 * The PAT session and accounts endpoints' operations (schemas in ../contract/pat.ts and
 * ../contract/accounts.ts; the activity feed's in ../contract/orders.ts).
 */
import { accountId, list, type Operations } from './kit';

export const patOperations: Operations = {
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
};

export const accountOperations: Operations = {
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
};
