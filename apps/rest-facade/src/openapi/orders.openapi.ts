/** OpenAPI pieces of the orders endpoints (issue 6), merged into openapi.ts and schemas.ts. */
import { accountId, currency, cursor, decimal, idempotency, list, nullable, object, ref, timestamp, uuid, type Operations } from './kit';

const side = { enum: ['BUY', 'SELL'] } as const;
const orderType = { enum: ['MARKET', 'LIMIT', 'STOP', 'STOP_LIMIT'] } as const;
const timeInForce = { enum: ['DAY', 'GTC', 'IOC', 'FOK'], description: 'MARKET: DAY, IOC, FOK. LIMIT: all. STOP and STOP_LIMIT: DAY, GTC.' } as const;
const status = {
  enum: ['ACCEPTED', 'NEW', 'PARTIALLY_FILLED', 'FILLED', 'CANCELLED', 'REJECTED', 'EXPIRED'],
  description: 'ACCEPTED (recorded, reserving buying power) → NEW (working) → PARTIALLY_FILLED → FILLED; or CANCELLED, EXPIRED, REJECTED',
} as const;
const change = ref('Change');

export const orderSchemas = {
  Trade: object({
    id: uuid,
    orderId: uuid,
    accountId: uuid,
    symbol: { type: 'string' },
    side,
    quantity: decimal,
    price: decimal,
    currency,
    grossAmount: decimal,
    commission: decimal,
    netAmount: { ...decimal, description: 'Signed cash effect: buys −(gross + commission), sells gross − commission' },
    executedAt: timestamp,
  }),
  OrderEvent: {
    description: 'The `data` of one event: an Order (without fills) for `event: order`, a Trade for `event: fill`, `{ reason }` for `event: end`.',
    oneOf: [ref('Trade'), { type: 'object', required: ['id', 'accountId', 'status'], properties: { id: uuid, accountId: uuid, status } }, object({ reason: { type: 'string' } })],
  },
  Order: object({
    id: uuid,
    accountId: uuid,
    clientOrderId: { type: 'string' },
    symbol: { type: 'string' },
    currency,
    side,
    type: orderType,
    timeInForce,
    quantity: decimal,
    filledQuantity: decimal,
    remainingQuantity: decimal,
    limitPrice: nullable(decimal),
    stopPrice: nullable(decimal),
    averageFillPrice: nullable(decimal),
    grossAmount: decimal,
    commission: decimal,
    reservedAmount: { ...nullable(decimal), description: 'Cash held in banking for a buy (null for sells)' },
    status,
    statusReason: { type: ['string', 'null'] },
    createdAt: timestamp,
    updatedAt: timestamp,
    submittedAt: nullable(timestamp),
    triggeredAt: nullable(timestamp),
    filledAt: nullable(timestamp),
    cancelledAt: nullable(timestamp),
    expiredAt: nullable(timestamp),
    rejectedAt: nullable(timestamp),
    expiresAt: nullable(timestamp),
    fills: { type: 'array', items: ref('Trade') },
  }),
  OrderPage: object({ accountId: uuid, orders: { type: 'array', items: ref('Order') }, nextCursor: cursor }),
  TradePage: object({ accountId: uuid, trades: { type: 'array', items: ref('Trade') }, nextCursor: cursor }),
  OrderRequest: object(
    {
      accountId: uuid,
      symbol: { type: 'string', examples: ['AAPL'] },
      side,
      type: orderType,
      timeInForce,
      quantity: { ...decimal, description: 'A multiple of the lot size, within the instrument limits' },
      limitPrice: { ...decimal, description: 'LIMIT and STOP_LIMIT only; on the tick' },
      stopPrice: { ...decimal, description: 'STOP and STOP_LIMIT only; on the tick' },
      clientOrderId: { type: 'string', maxLength: 64, pattern: '^[A-Za-z0-9._:-]{1,64}$', description: 'Unique per account; generated when absent' },
    },
    ['accountId', 'symbol', 'side', 'type', 'timeInForce', 'quantity'],
  ),
  CancelOrderRequest: object({ orderId: uuid }),
  Change: object({ before: decimal, change: decimal, after: decimal }),
  WhatIfResult: object({
    accountId: uuid,
    symbol: { type: 'string' },
    side,
    type: orderType,
    timeInForce,
    quantity: decimal,
    currency,
    lastPrice: decimal,
    estimatedPrice: decimal,
    estimatedGrossAmount: decimal,
    estimatedCommission: decimal,
    estimatedTotal: { ...decimal, description: 'Gross + commission (buy) or gross − commission (sell)' },
    reservedAmount: { ...decimal, description: 'What placing it would hold in banking' },
    cash: { ...change, description: 'Cash in the instrument currency' },
    buyingPower: { ...change, description: 'Available to trade in the instrument currency' },
    margin: object({ initialRequirementChange: decimal, maintenanceRequirementChange: decimal }),
    position: { ...nullable(change), description: 'Sells: quantity available to sell' },
    wouldBeRejected: { type: 'boolean' },
    rejectReasons: { type: 'array', items: object({ field: { type: 'string' }, message: { type: 'string' } }) },
    warnings: { type: 'array', items: { type: 'string' } },
  }),
  OrderRules: object({
    accountId: uuid,
    orderTypes: { type: 'array', items: orderType },
    timesInForce: { type: 'array', items: timeInForce },
    timeInForceByType: { type: 'array', items: object({ type: orderType, timesInForce: { type: 'array', items: timeInForce } }) },
    shortSellingAllowed: { type: 'boolean' },
    marketOpen: { type: 'boolean' },
    tradingHours: { type: 'string', examples: ['always open', '14:30-21:00 UTC'] },
    commissionRate: { ...decimal, description: 'Fraction of the traded value' },
    minimumCommission: { ...decimal, description: "The least an order that trades pays in commission, in the instrument's currency" },
    priceBand: { ...decimal, description: 'Limit and stop prices must lie within this fraction of the last price' },
    maxOpenOrders: { type: 'integer', description: 'Working orders one account may have at once' },
    marketOrderCollar: { ...decimal, description: 'Market and stop buys reserve and never pay more than the reference price × (1 + collar)' },
    instruments: {
      type: 'array',
      items: object({
        symbol: { type: 'string' },
        name: { type: 'string' },
        currency,
        tickSize: decimal,
        lotSize: decimal,
        minQuantity: decimal,
        maxQuantity: decimal,
        fractional: { type: 'boolean' },
        tradable: { type: 'boolean' },
        lastPrice: decimal,
      }),
    },
  }),
};

const symbol = (description: string) => ({ name: 'symbol', in: 'query' as const, schema: { type: 'string', pattern: '^[A-Z0-9.]{1,12}$' }, description });
const idempotencyKey = idempotency('A retry with the same key and body returns the first result (the order as it is now, or the same rejection); the same key with another body is refused (422).');

export const orderOperations: Operations = {
  '/oms/{accountId}/order/rules': {
    get: {
      summary: 'What this account may send: order types, times in force, tick and lot rules, limits, short selling',
      scopes: ['read:orders'],
      params: [accountId, symbol('Only this instrument\'s rules (404 naming `symbol` when unknown)')],
      ok: { status: 200, schema: 'OrderRules' },
      errors: [400, 404],
    },
  },
  '/oms/what-if': {
    post: {
      summary: 'Preview an order: estimated price, commission, total, and the change to cash, buying power and margin; changes nothing (read:orders, but a POST: READ_ONLY tokens are refused)',
      scopes: ['read:orders'],
      body: 'OrderRequest',
      ok: { status: 200, schema: 'WhatIfResult' },
      errors: [400, 404, 415, 422],
    },
  },
  '/oms/order': {
    post: {
      summary: 'Place an order: validated against the rules, buying power held in banking (buys) or the position checked (sells); a refusal is a 422 naming the field (the order is kept as REJECTED)',
      scopes: ['write:orders'],
      params: [idempotencyKey],
      body: 'OrderRequest',
      ok: { status: 201, schema: 'Order' },
      errors: [400, 404, 409, 415, 422],
    },
    delete: {
      summary: 'Cancel a working order (NEW or PARTIALLY_FILLED) and release its hold. The order id goes in `?orderId=` or in the body `{ "orderId": … }`. Cancelling a cancelled order answers it again; a filled, expired or rejected one is a 409.',
      scopes: ['write:orders'],
      params: [{ name: 'orderId', in: 'query', schema: { type: 'string', format: 'uuid' }, description: 'The order to cancel (or send it in the body)' }],
      ok: { status: 200, schema: 'Order' },
      errors: [400, 404, 409, 415],
    },
  },
  '/oms/{accountId}/orders': {
    get: {
      summary: 'The account\'s orders with their fills, newest first; from/to filter the creation time',
      scopes: ['read:orders'],
      params: [accountId, ...list, { name: 'status', in: 'query', schema: status }],
      ok: { status: 200, schema: 'OrderPage' },
      errors: [400, 404],
    },
  },
  '/oms/{accountId}/order/{orderId}': {
    get: {
      summary: 'One order with its fills',
      scopes: ['read:orders'],
      params: [accountId, { name: 'orderId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
      ok: { status: 200, schema: 'Order' },
      errors: [400, 404],
    },
  },
  '/oms/{accountId}/events': {
    get: {
      summary:
        'Live order events (Server-Sent Events): every state change of the account\'s orders (`event: order`, the order without fills) and every fill (`event: fill`, a Trade). Each event has an `id`; reconnect with the `Last-Event-ID` header to get everything after it, then live events again, with no gap and no repeat. A comment line is sent every 15 s; the stream ends with `event: end` when the session is revoked or expires. At most 5 open streams per user.',
      scopes: ['read:orders'],
      params: [accountId, { name: 'Last-Event-ID', in: 'header', schema: { type: 'string', pattern: '^\\d+-\\d+$' }, description: 'The id of the last event received, to resume after a reconnect' }],
      ok: {
        status: 200,
        schema: 'OrderEvent',
        mediaType: 'text/event-stream',
        description: 'A stream of `id: …`, `event: order|fill|end` and `data: <JSON>` blocks; the data of each event is described by OrderEvent',
      },
      errors: [400, 404, 429],
    },
  },
  '/oms/{accountId}/trades': {
    get: {
      summary: 'Executions, newest first; from/to filter the execution time',
      scopes: ['read:orders'],
      params: [accountId, ...list, symbol('Only this instrument')],
      ok: { status: 200, schema: 'TradePage' },
      errors: [400, 404],
    },
  },
};
