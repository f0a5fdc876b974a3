/** The banking endpoints' operations (schemas in ../contract/banking.ts and ../contract/requests.ts). */
import { accountId, idempotency, list, type Operations } from './kit';

const idempotencyKey = idempotency(
  'A retry with the same key and body returns the first result; the same key with another body is refused (422).',
);

export const bankingOperations: Operations = {
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
