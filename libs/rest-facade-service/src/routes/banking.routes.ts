import { errors } from '@trading/errors';
import { enumQueryParam, idempotencyKey, jsonBody, listParams, ownAccount, uuidParam } from './params';
import { cancelFundingRequest, CASH_ACTIVITY_TYPES, FUNDING_STATES, FUNDING_TYPES, fundingRequest } from '../contract';
import type { RestRoute } from './route';

const BALANCE = 'currency cash settledCash unsettledCash held availableToTrade availableToWithdraw pendingIn pendingOut';
export const TRANSACTION =
  'id accountId type state amount currency reference rejectReason createdAt updatedAt completedAt cancelledAt rejectedAt';

const fundingMutation = (name: 'deposit' | 'withdraw'): RestRoute => ({
  method: 'POST',
  path: `/banking/${name}`,
  scopes: ['write:banking'],
  status: 201,
  document: /* GraphQL */ `
    mutation Funding($input: FundingInput!, $idempotencyKey: String) {
      transaction: ${name}(input: $input, idempotencyKey: $idempotencyKey) { ${TRANSACTION} }
    }
  `,
  variables: (req) => ({ input: jsonBody(req, fundingRequest), idempotencyKey: idempotencyKey(req) }),
  shape: (data) => data.transaction,
});

export const bankingRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/banking/:accountId/balance',
    scopes: ['read:banking'],
    document: /* GraphQL */ `
      query Balances($accountId: ID!) { account(id: $accountId) { balances { ${BALANCE} } } }
    `,
    variables: (req) => ({ accountId: uuidParam(req, 'accountId') }),
    shape: (data, req) => ({ accountId: req.params['accountId'], balances: ownAccount<{ balances: unknown[] }>(data).balances }),
  },
  {
    method: 'GET',
    path: '/banking/:accountId/balance/:ccy',
    scopes: ['read:banking'],
    document: /* GraphQL */ `
      query Balance($accountId: ID!, $currency: String!) { account(id: $accountId) { balance(currency: $currency) { ${BALANCE} } } }
    `,
    variables: (req) => {
      const ccy = String(req.params['ccy']).toUpperCase();
      if (!/^[A-Z]{3}$/.test(ccy)) throw errors.badInput('ccy', 'ccy must be an ISO 4217 currency code, e.g. USD');
      return { accountId: uuidParam(req, 'accountId'), currency: ccy };
    },
    shape: (data, req) => ({ accountId: req.params['accountId'], ...ownAccount<{ balance: Record<string, unknown> }>(data).balance }),
  },
  {
    method: 'GET',
    path: '/banking/:accountId/activity',
    scopes: ['read:banking'],
    document: /* GraphQL */ `
      query CashActivity($accountId: ID!, $limit: Int, $cursor: String, $from: String, $to: String, $type: CashActivityType) {
        account(id: $accountId) {
          cashActivity(limit: $limit, cursor: $cursor, from: $from, to: $to, type: $type) {
            nodes { id type currency amount balanceAfter description transactionId occurredAt }
            nextCursor
          }
        }
      }
    `,
    variables: (req) => ({
      accountId: uuidParam(req, 'accountId'),
      ...listParams(req),
      type: enumQueryParam(req, 'type', CASH_ACTIVITY_TYPES),
    }),
    shape: (data, req) => {
      const { cashActivity } = ownAccount<{ cashActivity: { nodes: unknown[]; nextCursor: string | null } }>(data);
      return { accountId: req.params['accountId'], activity: cashActivity.nodes, nextCursor: cashActivity.nextCursor };
    },
  },
  {
    method: 'GET',
    path: '/banking/:accountId/txn-activity',
    scopes: ['read:banking'],
    document: /* GraphQL */ `
      query FundingTransactions($accountId: ID!, $limit: Int, $cursor: String, $from: String, $to: String, $type: FundingType, $state: FundingState) {
        account(id: $accountId) {
          fundingTransactions(limit: $limit, cursor: $cursor, from: $from, to: $to, type: $type, state: $state) { nodes { ${TRANSACTION} } nextCursor }
        }
      }
    `,
    variables: (req) => ({
      accountId: uuidParam(req, 'accountId'),
      ...listParams(req),
      type: enumQueryParam(req, 'type', FUNDING_TYPES),
      state: enumQueryParam(req, 'state', FUNDING_STATES),
    }),
    shape: (data, req) => {
      const { fundingTransactions } = ownAccount<{ fundingTransactions: { nodes: unknown[]; nextCursor: string | null } }>(data);
      return { accountId: req.params['accountId'], transactions: fundingTransactions.nodes, nextCursor: fundingTransactions.nextCursor };
    },
  },
  fundingMutation('deposit'),
  fundingMutation('withdraw'),
  {
    method: 'POST',
    path: '/banking/cancel-txn',
    scopes: ['write:banking'],
    document: /* GraphQL */ `
      mutation CancelFunding($transactionId: ID!, $idempotencyKey: String) {
        transaction: cancelFundingTransaction(transactionId: $transactionId, idempotencyKey: $idempotencyKey) { ${TRANSACTION} }
      }
    `,
    variables: (req) => ({
      transactionId: jsonBody(req, cancelFundingRequest).transactionId,
      idempotencyKey: idempotencyKey(req),
    }),
    shape: (data) => data.transaction,
  },
];
