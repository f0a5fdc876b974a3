/** The orders endpoints' operations (their schemas are the contract's, in ../contract). */
import { ORDER_STATUSES } from '../contract/kit';
import { accountId, idempotency, list, type Operations } from './kit';

const status = {
  enum: ORDER_STATUSES,
  description:
    'ACCEPTED → NEW → PARTIALLY_FILLED → FILLED; or CANCELLED, EXPIRED, REJECTED; PENDING: a BRACKET or OTO child waiting for its entry',
};

const symbol = (description: string) => ({
  name: 'symbol',
  in: 'query' as const,
  schema: { type: 'string', pattern: '^[A-Z0-9.]{1,12}$' },
  description,
});
const idempotencyKey = idempotency(
  'A retry with the same key and body returns the first result (the order as it is now, or the same rejection); the same key with another body is refused (422).',
);

const clientOrderId = {
  name: 'clientOrderId',
  in: 'path' as const,
  required: true,
  schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,67}$' },
  description: 'As the order was placed with',
};

const closeKey = idempotency('A retry with the same key answers the first close again (the same orders).');

export const orderOperations: Operations = {
  '/accounts/{accountId}/positions/{symbol}': {
    delete: {
      summary:
        'Close a position: places the MARKET DAY sell that closes it (all of it, `quantity`, or `percentage` of the holding floored to the lot; not both) and answers that order. Sells already working keep their part: only the quantity they do not already sell is closed (nothing left: 409 naming `symbol`). No position: 404 naming `symbol`. Charged to the order budget.',
      scopes: ['write:orders'],
      params: [
        accountId,
        {
          name: 'symbol',
          in: 'path',
          required: true,
          schema: { type: 'string', pattern: '^[A-Za-z0-9.]{1,12}$' },
          description: 'e.g. AAPL',
        },
        { name: 'quantity', in: 'query', schema: { type: 'string' }, description: 'How much to sell' },
        { name: 'percentage', in: 'query', schema: { type: 'string' }, description: '0 < p ≤ 100, of the holding' },
        closeKey,
      ],
      ok: { status: 200, schema: 'Order' },
      errors: [400, 404, 409, 422],
    },
  },
  '/accounts/{accountId}/positions': {
    delete: {
      summary:
        "Close every position: cancels the account's working orders first (their holds come back), then places one MARKET DAY sell per holding; answers those orders. Charged one unit of the order budget.",
      scopes: ['write:orders'],
      params: [accountId, closeKey],
      ok: { status: 200, schema: 'ClosedPositions' },
      errors: [400, 404, 422],
    },
  },
  '/oms/{accountId}/order/rules': {
    get: {
      summary: 'What this account may send: order types, times in force, tick and lot rules, limits, short selling',
      scopes: ['read:orders'],
      params: [accountId, symbol("Only this instrument's rules (404 naming `symbol` when unknown)")],
      ok: { status: 200, schema: 'OrderRules' },
      errors: [400, 404],
    },
  },
  '/oms/what-if': {
    post: {
      summary:
        'Preview an order: estimated price, commission, total, and the change to cash, buying power and margin; changes nothing (read:orders, but a POST: READ_ONLY tokens are refused)',
      scopes: ['read:orders'],
      body: 'OrderRequest',
      ok: { status: 200, schema: 'WhatIfResult' },
      errors: [400, 404, 415, 422],
    },
  },
  '/oms/order': {
    post: {
      summary:
        'Place an order: validated against the rules, buying power held in banking (buys) or the position checked (sells); a refusal is a 422 naming the field (the order is kept as REJECTED)',
      scopes: ['write:orders'],
      params: [idempotencyKey],
      body: 'OrderRequest',
      ok: { status: 201, schema: 'Order' },
      errors: [400, 404, 409, 415, 422],
    },
    put: {
      summary:
        "Replace a working order atomically: one new order (`replaces` = the old id) carries the remainder (the new `quantity` is the total, fills included, and must exceed what has filled); the old order ends CANCELLED ('Replaced by order …', `replacedBy` = the new id); a buy's hold grows or shrinks in the same step. A fill racing the replace either leaves a smaller remainder for it or makes it a 409 (the order filled, or filled beyond the new quantity), never both. Nothing to change: 422. Refusals (buying power, position, rules) leave the old order as it was: 422 naming the field. Charged to the order budget.",
      scopes: ['write:orders'],
      params: [idempotencyKey],
      body: 'ReplaceOrderRequest',
      ok: { status: 200, schema: 'Order' },
      errors: [400, 404, 409, 415, 422],
    },
    delete: {
      summary:
        'Cancel a working order (NEW or PARTIALLY_FILLED) and release its hold. The order id goes in `?orderId=` or in the body `{ "orderId": … }`. Cancelling a cancelled order answers it again; a filled, expired or rejected one is a 409.',
      scopes: ['write:orders'],
      params: [
        {
          name: 'orderId',
          in: 'query',
          schema: { type: 'string', format: 'uuid' },
          description: 'The order to cancel (or send it in the body)',
        },
      ],
      ok: { status: 200, schema: 'Order' },
      errors: [400, 404, 409, 415],
    },
  },
  '/oms/{accountId}/orders': {
    get: {
      summary:
        "The account's orders with their fills, newest first; from/to filter the creation time. The filters combine; with none, every order (open and closed).",
      scopes: ['read:orders'],
      params: [
        accountId,
        ...list,
        {
          name: 'status',
          in: 'query',
          schema: { enum: ['open', 'closed', 'all', ...ORDER_STATUSES] },
          description: `\`open\`: not done yet (ACCEPTED, PENDING, NEW, PARTIALLY_FILLED); \`closed\`: done (FILLED, CANCELLED, REJECTED, EXPIRED); \`all\` (the default); or one status. ${status.description}`,
        },
        {
          name: 'symbols',
          in: 'query',
          schema: { type: 'string' },
          description: 'Only orders in these instruments: comma-separated, 1 to 100, e.g. `AAPL,MSFT` (an unknown symbol matches nothing)',
        },
      ],
      ok: { status: 200, schema: 'OrderPage' },
      errors: [400, 404],
    },
  },
  '/oms/{accountId}/order/by-client-id/{clientOrderId}': {
    get: {
      summary:
        "The order placed with this `clientOrderId` (404 naming `clientOrderId` when none). After a placement that timed out, this says whether the order exists and what became of it; a retry with the same `clientOrderId` is refused (409), never placed twice. A leg of a BRACKET, OCO or OTO carries the entry's id with `:tp` or `:sl` added.",
      scopes: ['read:orders'],
      params: [accountId, clientOrderId],
      ok: { status: 200, schema: 'Order' },
      errors: [400, 404],
    },
    delete: {
      summary: 'Cancel the order placed with this `clientOrderId`, as `DELETE /oms/order` does (404 naming `clientOrderId` when none).',
      scopes: ['write:orders'],
      params: [accountId, clientOrderId],
      ok: { status: 200, schema: 'Order' },
      errors: [400, 404, 409],
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
        "Live order events (Server-Sent Events): every state change of the account's orders (`event: order`, the order without fills) and every fill (`event: fill`, a Trade). Each event has an `id`; reconnect with the `Last-Event-ID` header to get everything after it, then live events again, with no gap and no repeat. If events after that id are no longer kept (the stream keeps about the last million), an `event: gap` comes first: read the orders and trades again. A gap can also come mid-stream, when the event store restarted or failed over: events may then be missing or come twice, so read the orders and trades again. A comment line is sent every 15 s; the stream ends with `event: end` when the session is revoked or expires. At most 5 open streams per user.",
      scopes: ['read:orders'],
      params: [
        accountId,
        {
          name: 'Last-Event-ID',
          in: 'header',
          schema: { type: 'string', pattern: '^\\d+-\\d+$' },
          description: 'The id of the last event received, to resume after a reconnect',
        },
        {
          name: 'lastEventId',
          in: 'query',
          schema: { type: 'string', pattern: '^\\d+-\\d+$' },
          description: 'As `Last-Event-ID`, for a client that cannot set headers (the header wins)',
        },
      ],
      ok: {
        status: 200,
        schema: 'OrderEvent',
        mediaType: 'text/event-stream',
        description:
          'A stream of `id: …`, `event: order|fill|gap|end` and `data: <JSON>` blocks; the data of each event is described by OrderEvent',
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
