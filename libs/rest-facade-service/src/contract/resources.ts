import { z } from '@trading/config';
import {
  CASH_ACTIVITY_TYPES,
  currency,
  cursor,
  decimal,
  FUNDING_STATES,
  FUNDING_TYPES,
  id,
  money,
  named,
  ORDER_SIDES,
  ORDER_CLASSES,
  ORDER_LEGS,
  ORDER_STATUSES,
  ORDER_TYPES,
  price,
  quantity,
  text,
  TIMES_IN_FORCE,
  timestamp,
} from './kit';

/** What the REST API answers, resource by resource. Every object is closed: a field not listed here is a bug. */
const o = z.strictObject;
const list = <S extends z.ZodType>(items: S) => z.array(items);

export const problem = named(
  'Problem',
  z.object({
    type: text,
    title: text,
    status: z.int(),
    detail: text,
    code: text.meta({ examples: ['BAD_USER_INPUT', 'UNAUTHENTICATED', 'INSUFFICIENT_SCOPE', 'NOT_FOUND'] }),
    field: text.optional().meta({ description: 'The request field at fault' }),
    requestId: text.optional(),
  }),
  'RFC 9457 problem details, with a stable `code` and the `field` at fault',
);

// Personal access tokens
export const patLoginResponse = named('PatLoginResponse', o({ userId: text, token: text.meta({ description: 'Session JWT' }) }));
export const patRevokeResponse = named('PatRevokeResponse', o({ tokenId: text, revokedAt: timestamp }));
const patLogin = named(
  'PatLogin',
  o({
    at: timestamp,
    tokenId: text.nullable(),
    tokenName: text.nullable(),
    ip: text.nullable(),
    userAgent: text.nullable(),
    outcome: z.enum(['SUCCESS', 'FAILURE']),
  }),
);
export const patLoginActivityPage = named('PatLoginActivityPage', o({ logins: list(patLogin), nextCursor: cursor }));

// Accounts
const accountSettingsFields = {
  nickname: text.nullable().meta({ description: "The owner's own name for the account (1 to 64 characters); null when none is set" }),
  tradeConfirmationEmails: z.boolean().meta({ description: 'Whether each fill is confirmed by email (true unless turned off)' }),
};
const account = named(
  'Account',
  o({
    id,
    number: text,
    type: z.enum(['CASH', 'MARGIN']),
    status: z.enum(['ACTIVE', 'RESTRICTED', 'CLOSED']),
    baseCurrency: currency,
    createdAt: timestamp,
    ...accountSettingsFields,
  }),
);
export const accountList = named('AccountList', o({ accounts: list(account) }));
export const accountSettings = named(
  'AccountSettings',
  o({ accountId: id, ...accountSettingsFields }),
  "The account's settings as they are after the change",
);
const percent = decimal.nullable().meta({ description: 'In percent, two decimals (half-up)', examples: ['10.15'] });
const positionFields = {
  symbol: text,
  quantity: quantity.meta({ description: 'Negative for a short holding' }),
  quantityAvailable: quantity.meta({
    description: 'quantity less what working sell orders already sell: what a new sell or a close may still sell (never below 0)',
  }),
  averageCost: price,
  costBasis: money,
  marketPrice: price,
  marketValue: money,
  unrealizedPnl: money,
  unrealizedPnlPercent: percent.meta({ description: 'unrealizedPnl / |costBasis| × 100, two decimals; null when costBasis is 0' }),
  realizedPnl: money,
  dayChange: money,
  dayChangePercent: percent.meta({
    description: '(last price − previous close) / previous close × 100, two decimals; null when there is no previous close',
  }),
  currency,
  updatedAt: timestamp,
};
export const position = named('Position', o({ accountId: id, ...positionFields }));
const positionItem = named('PositionItem', o(positionFields));
export const positionPage = named('PositionPage', o({ accountId: id, positions: list(positionItem), nextCursor: cursor }));
const marginFigures = named(
  'MarginFigures',
  o({
    currency,
    cash: money,
    marketValue: money,
    equity: money,
    initialRequirement: money,
    maintenanceRequirement: money,
    excessLiquidity: money,
    buyingPower: money,
  }),
);
export const margin = named(
  'Margin',
  o({
    accountId: id,
    accountType: z.enum(['CASH', 'MARGIN']),
    baseCurrency: currency,
    asOf: timestamp,
    total: marginFigures,
    byCurrency: list(marginFigures),
  }),
);
const portfolio = named(
  'Portfolio',
  o({
    currency,
    cash: money,
    marketValue: money,
    totalValue: money,
    totalValueInBase: money,
    allocationPercent: decimal,
    dayChange: money,
    dayChangePercent: decimal,
    positionCount: z.int().min(0),
  }),
);
export const portfolioSummary = named(
  'PortfolioSummary',
  o({
    accountId: id,
    baseCurrency: currency,
    totalValue: money,
    dayChange: money,
    dayChangePercent: decimal,
    asOf: timestamp,
    portfolios: list(portfolio),
  }),
);

// Banking
const balanceFields = {
  currency,
  cash: money.meta({ description: 'settled + unsettled cash, including held' }),
  settledCash: money,
  unsettledCash: money,
  held: money.meta({ description: 'reserved for open orders and pending withdrawals' }),
  availableToTrade: money,
  availableToWithdraw: money,
  pendingIn: money.meta({ description: 'deposits not yet cleared (PENDING): added to cash when they clear' }),
  pendingOut: money.meta({ description: 'withdrawals not yet paid out (PENDING): still in cash and held until then' }),
};
const cashBalance = named('CashBalance', o(balanceFields));
export const accountCashBalance = named('AccountCashBalance', o({ accountId: id, ...balanceFields }));
export const balanceList = named('BalanceList', o({ accountId: id, balances: list(cashBalance) }));
const cashActivity = named(
  'CashActivity',
  o({
    id: text,
    type: z.enum(CASH_ACTIVITY_TYPES),
    currency,
    amount: money.meta({ description: 'Signed: positive credits cash' }),
    balanceAfter: money.meta({ description: 'Running cash balance in that currency after this movement' }),
    description: text,
    transactionId: id.nullable(),
    occurredAt: timestamp,
  }),
);
export const cashActivityPage = named('CashActivityPage', o({ accountId: id, activity: list(cashActivity), nextCursor: cursor }));
export const fundingTransaction = named(
  'FundingTransaction',
  o({
    id,
    accountId: id,
    type: z.enum(FUNDING_TYPES),
    state: z.enum(FUNDING_STATES),
    amount: money,
    currency,
    reference: text.nullable(),
    rejectReason: text.nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
    completedAt: timestamp.nullable(),
    cancelledAt: timestamp.nullable(),
    rejectedAt: timestamp.nullable(),
  }),
);
export const fundingTransactionPage = named(
  'FundingTransactionPage',
  o({ accountId: id, transactions: list(fundingTransaction), nextCursor: cursor }),
);

// Orders
const side = z.enum(ORDER_SIDES);
const orderType = z.enum(ORDER_TYPES);
const timeInForce = z
  .enum(TIMES_IN_FORCE)
  .meta({ description: 'MARKET: DAY, IOC, FOK. LIMIT: all. STOP, STOP_LIMIT and TRAILING_STOP: DAY, GTC.' });
const orderStatus = z.enum(ORDER_STATUSES).meta({
  description:
    'ACCEPTED (recorded, reserving buying power) → NEW (working) → PARTIALLY_FILLED → FILLED; or CANCELLED, EXPIRED, REJECTED. PENDING: a BRACKET or OTO child waiting for its entry to fill',
});
export const trade = named(
  'Trade',
  o({
    id,
    orderId: id,
    accountId: id,
    symbol: text,
    side,
    quantity,
    price,
    currency,
    grossAmount: money,
    commission: money,
    netAmount: money.meta({ description: 'Signed cash effect: buys −(gross + commission), sells gross − commission' }),
    executedAt: timestamp,
  }),
);
const fillActivity = named(
  'FillActivity',
  o({
    id: id.meta({ description: 'The trade (execution) id' }),
    type: z.literal('FILL'),
    occurredAt: timestamp.meta({ description: 'When it executed' }),
    orderId: id,
    symbol: text,
    side,
    quantity,
    price,
    grossAmount: money,
    commission: money.meta({ description: 'Also listed as its own FEE item, the cash movement banking books for it' }),
    currency,
  }),
  "An execution of one of the account's orders",
);
const cashMovementActivity = named(
  'CashMovementActivity',
  o({
    id: id.meta({ description: 'The ledger entry that moved the cash' }),
    type: z.enum(['DEPOSIT', 'WITHDRAWAL', 'FEE']),
    occurredAt: timestamp,
    amount: money.meta({ description: 'Signed: positive credits cash' }),
    currency,
    transactionId: id.nullable().meta({ description: 'The funding transaction behind a deposit or withdrawal; null for a fee' }),
    description: text,
  }),
  'Money in from the bank (DEPOSIT), out to it (WITHDRAWAL), or a commission charged for a fill (FEE)',
);
export const activityPage = named(
  'ActivityPage',
  o({
    accountId: id,
    activities: list(z.discriminatedUnion('type', [fillActivity, cashMovementActivity])),
    nextPageToken: z.string().nullable().meta({ description: 'Pass as `pageToken` for the next page; null on the last page.' }),
  }),
);
const orderFields = {
  id,
  accountId: id,
  clientOrderId: text,
  symbol: text,
  currency,
  side,
  type: orderType,
  timeInForce,
  quantity,
  filledQuantity: quantity,
  remainingQuantity: quantity,
  limitPrice: price.nullable(),
  stopPrice: price.nullable(),
  averageFillPrice: price.nullable(),
  grossAmount: money,
  commission: money,
  reservedAmount: money.nullable().meta({ description: 'Cash held in banking for a buy (null for sells)' }),
  status: orderStatus,
  statusReason: text.nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
  submittedAt: timestamp.nullable(),
  triggeredAt: timestamp.nullable(),
  filledAt: timestamp.nullable(),
  cancelledAt: timestamp.nullable(),
  expiredAt: timestamp.nullable(),
  rejectedAt: timestamp.nullable(),
  expiresAt: timestamp.nullable(),
  trailPrice: price.nullable().meta({ description: 'TRAILING_STOP: the trail as a price distance' }),
  trailPercent: decimal.nullable().meta({ description: 'TRAILING_STOP: the trail as a percentage' }),
  highWaterMark: price.nullable().meta({
    description: 'TRAILING_STOP: the best price since it started working (highest for a sell, lowest for a buy); stopPrice trails it',
  }),
  orderClass: z.enum(ORDER_CLASSES),
  parentOrderId: id.nullable().meta({ description: "A child's entry order (or an OCO leg's first leg)" }),
  leg: z.enum(ORDER_LEGS).nullable().meta({ description: 'Which exit a child is' }),
  replaces: id.nullable().meta({ description: 'The order this one replaced (PUT /oms/order)' }),
  replacedBy: id.nullable().meta({ description: "The order that replaced this one (it is CANCELLED, 'Replaced by order …')" }),
};
const orderLegView = named('OrderLegView', o(orderFields), "A child order as its parent's `legs` show it (without fills)");
export const order = named(
  'Order',
  o({
    ...orderFields,
    legs: list(orderLegView).meta({ description: "This order's children: a bracket's exits, an OTO's child, an OCO's other leg" }),
    fills: list(trade),
  }),
);
export const orderUpdate = named('OrderUpdate', o(orderFields), 'An order as an `event: order` carries it: the order without its fills');
export const orderEvent = named(
  'OrderEvent',
  z.union([orderUpdate, trade, o({ reason: text })]),
  'The `data` of one event: an OrderUpdate for `event: order`, a Trade for `event: fill`, `{ reason }` for `event: gap` and `event: end`',
);
export const closedPositions = named(
  'ClosedPositions',
  o({ accountId: id, orders: list(order) }),
  'The sell orders that close every position, one per holding (the working orders were cancelled first)',
);
export const orderPage = named('OrderPage', o({ accountId: id, orders: list(order), nextCursor: cursor }));
export const tradePage = named('TradePage', o({ accountId: id, trades: list(trade), nextCursor: cursor }));
const change = named('Change', o({ before: money, change: money, after: money }));
export const whatIfResult = named(
  'WhatIfResult',
  o({
    accountId: id,
    symbol: text,
    side,
    type: orderType,
    timeInForce,
    quantity,
    currency,
    lastPrice: price,
    estimatedPrice: price,
    estimatedGrossAmount: money,
    estimatedCommission: money,
    estimatedTotal: money.meta({ description: 'Gross + commission (buy) or gross − commission (sell)' }),
    reservedAmount: money.meta({ description: 'What placing it would hold in banking' }),
    cash: change.meta({ description: 'Cash in the instrument currency' }),
    buyingPower: change.meta({ description: 'Available to trade in the instrument currency' }),
    margin: o({ initialRequirementChange: money, maintenanceRequirementChange: money }),
    position: o({ before: quantity, change: quantity, after: quantity })
      .nullable()
      .meta({ description: 'Sells: quantity available to sell' }),
    orderClass: z.enum(ORDER_CLASSES),
    legs: list(
      o({
        leg: z.enum(ORDER_LEGS),
        side,
        type: orderType,
        limitPrice: price.nullable(),
        stopPrice: price.nullable(),
        quantity,
        startsWhen: text.meta({ examples: ['the order fills', 'at once'] }),
        reservedAmount: money,
      }),
    ).meta({ description: 'The children; reservedAmount above includes what the buys among them hold' }),
    wouldBeRejected: z.boolean(),
    rejectReasons: list(o({ field: text, message: text })),
    warnings: list(text),
  }),
);
export const orderRules = named(
  'OrderRules',
  o({
    accountId: id,
    orderTypes: list(orderType),
    orderClasses: list(z.enum(ORDER_CLASSES)),
    timesInForce: list(timeInForce),
    timeInForceByType: list(o({ type: orderType, timesInForce: list(timeInForce) })),
    shortSellingAllowed: z.boolean(),
    marketOpen: z.boolean(),
    tradingHours: text.meta({ examples: ['always open', '14:30-21:00 UTC'] }),
    commissionRate: decimal.meta({ description: 'Fraction of the traded value' }),
    minimumCommission: money.meta({ description: "The least an order that trades pays in commission, in the instrument's currency" }),
    priceBand: decimal.meta({ description: 'Limit and stop prices must lie within this fraction of the last price' }),
    maxOpenOrders: z.int().meta({ description: 'Working orders one account may have at once' }),
    marketOrderCollar: decimal.meta({
      description: 'Market and stop buys reserve and never pay more than the reference price × (1 + collar)',
    }),
    instruments: list(
      o({
        symbol: text,
        name: text,
        currency,
        tickSize: decimal,
        lotSize: decimal,
        minQuantity: quantity,
        maxQuantity: quantity,
        fractional: z.boolean(),
        tradable: z.boolean(),
        lastPrice: price,
      }),
    ),
  }),
);
