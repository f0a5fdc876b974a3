import { oauthSchemas } from './oauth.openapi';
import { orderSchemas } from './orders.openapi';

/** JSON Schemas (2020-12, as OpenAPI 3.1 uses) of the REST resources. Decimals are strings. */
const decimal = { type: 'string', pattern: '^-?\\d+(\\.\\d+)?$', examples: ['1250.00'] } as const;
const timestamp = { type: 'string', format: 'date-time', examples: ['2026-11-21T14:03:12.000Z'] } as const;
const currency = { type: 'string', pattern: '^[A-Z]{3}$', description: 'ISO 4217', examples: ['USD'] } as const;
const uuid = { type: 'string', format: 'uuid' } as const;
const cursor = { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null on the last page.' } as const;

const object = (properties: Record<string, unknown>, required = Object.keys(properties)) => ({ type: 'object', additionalProperties: false, properties, required });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: 'null' }] });

const marginFigures = object({
  currency,
  cash: decimal,
  marketValue: decimal,
  equity: decimal,
  initialRequirement: decimal,
  maintenanceRequirement: decimal,
  excessLiquidity: decimal,
  buyingPower: decimal,
});

const position = {
  symbol: { type: 'string' },
  quantity: decimal,
  averageCost: decimal,
  costBasis: decimal,
  marketPrice: decimal,
  marketValue: decimal,
  unrealizedPnl: decimal,
  realizedPnl: decimal,
  dayChange: decimal,
  currency,
  updatedAt: timestamp,
};

const balance = {
  currency,
  cash: { ...decimal, description: 'settled + unsettled cash, including held' },
  settledCash: decimal,
  unsettledCash: decimal,
  held: { ...decimal, description: 'reserved for open orders and pending withdrawals' },
  availableToTrade: decimal,
  availableToWithdraw: decimal,
};

export const schemas = {
  Problem: {
    type: 'object',
    description: 'RFC 9457 problem details',
    properties: {
      type: { type: 'string' },
      title: { type: 'string' },
      status: { type: 'integer' },
      detail: { type: 'string' },
      code: { type: 'string', examples: ['BAD_USER_INPUT', 'UNAUTHENTICATED', 'INSUFFICIENT_SCOPE', 'NOT_FOUND'] },
      field: { type: 'string', description: 'The request field at fault' },
      requestId: { type: 'string' },
    },
    required: ['type', 'title', 'status', 'detail', 'code'],
  },
  PatLoginRequest: object({ token: { type: 'string', description: 'The full PAT, `<tokenId>.<secret>`' } }),
  PatLoginResponse: object({ userId: { type: 'string' }, token: { type: 'string', description: 'Session JWT' } }),
  PatRevokeRequest: object({ tokenId: { type: 'string', pattern: '^tpat_[0-9A-Za-z]{16}$', examples: ['tpat_0123456789abcdef'] } }),
  PatRevokeResponse: object({ tokenId: { type: 'string' }, revokedAt: timestamp }),
  PatLogin: object({
    at: timestamp,
    tokenId: { type: ['string', 'null'] },
    tokenName: { type: ['string', 'null'] },
    ip: { type: ['string', 'null'] },
    userAgent: { type: ['string', 'null'] },
    outcome: { enum: ['SUCCESS', 'FAILURE'] },
  }),
  PatLoginActivityPage: object({ logins: { type: 'array', items: ref('PatLogin') }, nextCursor: cursor }),
  Account: object({
    id: uuid,
    number: { type: 'string' },
    type: { enum: ['CASH', 'MARGIN'] },
    status: { enum: ['ACTIVE', 'RESTRICTED', 'CLOSED'] },
    baseCurrency: currency,
    createdAt: timestamp,
  }),
  AccountList: object({ accounts: { type: 'array', items: ref('Account') } }),
  Position: object({ accountId: uuid, ...position }),
  PositionItem: object(position),
  PositionPage: object({ accountId: uuid, positions: { type: 'array', items: ref('PositionItem') }, nextCursor: cursor }),
  MarginFigures: marginFigures,
  Margin: object({
    accountId: uuid,
    accountType: { enum: ['CASH', 'MARGIN'] },
    baseCurrency: currency,
    asOf: timestamp,
    total: ref('MarginFigures'),
    byCurrency: { type: 'array', items: ref('MarginFigures') },
  }),
  Portfolio: object({
    currency,
    cash: decimal,
    marketValue: decimal,
    totalValue: decimal,
    totalValueInBase: decimal,
    allocationPercent: decimal,
    dayChange: decimal,
    dayChangePercent: decimal,
    positionCount: { type: 'integer', minimum: 0 },
  }),
  PortfolioSummary: object({
    accountId: uuid,
    baseCurrency: currency,
    totalValue: decimal,
    dayChange: decimal,
    dayChangePercent: decimal,
    asOf: timestamp,
    portfolios: { type: 'array', items: ref('Portfolio') },
  }),
  CashBalance: object(balance),
  AccountCashBalance: object({ accountId: uuid, ...balance }),
  BalanceList: object({ accountId: uuid, balances: { type: 'array', items: ref('CashBalance') } }),
  CashActivity: object({
    id: { type: 'string' },
    type: { enum: ['DEPOSIT', 'WITHDRAWAL', 'TRADE', 'FEE'] },
    currency,
    amount: { ...decimal, description: 'Signed: positive credits cash' },
    balanceAfter: { ...decimal, description: 'Running cash balance in that currency after this movement' },
    description: { type: 'string' },
    transactionId: nullable(uuid),
    occurredAt: timestamp,
  }),
  CashActivityPage: object({ accountId: uuid, activity: { type: 'array', items: ref('CashActivity') }, nextCursor: cursor }),
  FundingTransaction: object({
    id: uuid,
    accountId: uuid,
    type: { enum: ['DEPOSIT', 'WITHDRAWAL'] },
    state: { enum: ['PENDING', 'COMPLETED', 'CANCELLED', 'REJECTED'] },
    amount: decimal,
    currency,
    reference: { type: ['string', 'null'] },
    rejectReason: { type: ['string', 'null'] },
    createdAt: timestamp,
    updatedAt: timestamp,
    completedAt: nullable(timestamp),
    cancelledAt: nullable(timestamp),
    rejectedAt: nullable(timestamp),
  }),
  FundingTransactionPage: object({ accountId: uuid, transactions: { type: 'array', items: ref('FundingTransaction') }, nextCursor: cursor }),
  FundingRequest: object(
    {
      accountId: uuid,
      amount: { ...decimal, description: 'Positive, at most 2 decimals' },
      currency,
      reference: { type: 'string', maxLength: 140 },
      sandboxOutcome: { enum: ['COMPLETED', 'REJECTED'], description: 'Sandbox only: force the simulated clearing outcome' },
    },
    ['accountId', 'amount', 'currency'],
  ),
  CancelFundingRequest: object({ transactionId: uuid }),
  ...orderSchemas,
  ...oauthSchemas,
};
