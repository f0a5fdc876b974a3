import { z } from '@trading/config';
import {
  currency,
  cursor,
  decimal,
  id,
  money,
  named,
  ORDER_CLASSES,
  ORDER_LEGS,
  ORDER_SIDES,
  ORDER_STATUSES,
  ORDER_TYPES,
  price,
  quantity,
  text,
  TIMES_IN_FORCE,
  timestamp,
} from './kit';

/**
 * What the orders endpoints (/v1/oms/…) answer: orders, their fills and live events, the
 * account's activity feed, what-if previews and the order rules. Every object is closed: a
 * field not listed here is a bug.
 */
const o = z.strictObject;
const list = <S extends z.ZodType>(items: S) => z.array(items);

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
