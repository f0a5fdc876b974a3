import type { Request } from 'express';
import { errors, isUuid } from '@trading/errors';
import { idempotencyKey, jsonBody, listParams, ownAccount, queryParam, uuidParam } from './params';
import { cancelOrderRequest, ORDER_STATUSES, orderRequest, replaceOrderRequest } from '../contract';
import type { RestRoute } from './route';
import { DECIMAL_SYNTAX } from '@trading/money';

const TRADE = 'id orderId accountId symbol side quantity price currency grossAmount commission netAmount executedAt';
const ORDER_FIELDS = `id accountId clientOrderId symbol currency side type timeInForce quantity filledQuantity remainingQuantity limitPrice stopPrice
  averageFillPrice grossAmount commission reservedAmount status statusReason createdAt updatedAt submittedAt triggeredAt filledAt
  cancelledAt expiredAt rejectedAt expiresAt trailPrice trailPercent highWaterMark orderClass parentOrderId leg replaces replacedBy`;
export const ORDER = `${ORDER_FIELDS} legs { ${ORDER_FIELDS} } fills { ${TRADE} }`;
const CHANGE = 'before change after';
const WHAT_IF = `accountId symbol side type timeInForce quantity currency lastPrice estimatedPrice estimatedGrossAmount estimatedCommission
  estimatedTotal reservedAmount cash { ${CHANGE} } buyingPower { ${CHANGE} } margin { initialRequirementChange maintenanceRequirementChange }
  position { ${CHANGE} } orderClass legs { leg side type limitPrice stopPrice quantity startsWhen reservedAmount } wouldBeRejected
  rejectReasons { field message } warnings`;
const RULES = `accountId orderTypes orderClasses timesInForce timeInForceByType { type timesInForce } shortSellingAllowed marketOpen tradingHours
  commissionRate minimumCommission priceBand maxOpenOrders marketOrderCollar instruments { symbol name currency tickSize lotSize minQuantity maxQuantity fractional tradable lastPrice }`;

const symbolParam = (req: Request) => {
  const symbol = queryParam(req, 'symbol');
  if (symbol !== undefined && !/^[A-Z0-9.]{1,12}$/.test(symbol))
    throw errors.badInput('symbol', 'symbol must be an instrument symbol, e.g. AAPL');
  return symbol;
};

/** The clientOrderId in the path: the client's own (1 to 64 characters) or a leg's, which adds `:tp` or `:sl`. */
const clientOrderIdParam = (req: Request) => {
  const value = String(req.params['clientOrderId']);
  if (!/^[A-Za-z0-9._:-]{1,67}$/.test(value))
    throw errors.badInput('clientOrderId', 'clientOrderId must be 1 to 64 characters of A-Z a-z 0-9 . _ : - (a leg adds :tp or :sl)');
  return value;
};

/** `status=open|closed|all` (Alpaca's spelling) or one status (NEW, FILLED, …), in any case. */
const STATUS_GROUPS = ['OPEN', 'CLOSED', 'ALL'] as const;
function statusFilter(req: Request): { status?: string; statusGroup?: string } {
  const value = queryParam(req, 'status')?.toUpperCase();
  if (value === undefined) return {};
  if ((STATUS_GROUPS as readonly string[]).includes(value)) return { statusGroup: value };
  if ((ORDER_STATUSES as readonly string[]).includes(value)) return { status: value };
  throw errors.badInput('status', `status must be open, closed, all or one of ${ORDER_STATUSES.join(', ')}`);
}

/** `symbols=AAPL,MSFT`: only orders in these instruments (1 to 100). */
function symbolsFilter(req: Request): string[] | undefined {
  const raw = queryParam(req, 'symbols');
  if (raw === undefined) return undefined;
  const symbols = raw
    .split(',')
    .map((s) => s.trim().toUpperCase())
    .filter(Boolean);
  if (!symbols.length || symbols.length > 100) throw errors.badInput('symbols', 'symbols must name 1 to 100 instruments, e.g. AAPL,MSFT');
  const malformed = symbols.find((s) => !/^[A-Z0-9.]{1,12}$/.test(s));
  if (malformed) throw errors.badInput('symbols', `${malformed.slice(0, 20)} is not an instrument symbol, e.g. AAPL`);
  return symbols;
}

/** DELETE /oms/order names the order in `?orderId=` or in a JSON body `{ "orderId": … }`. */
function orderIdToCancel(req: Request): string {
  const fromQuery = queryParam(req, 'orderId');
  const orderId = fromQuery ?? jsonBody(req, cancelOrderRequest).orderId;
  if (!isUuid(orderId)) throw errors.badInput('orderId', 'orderId must be a UUID');
  return orderId;
}

/** `?quantity=` or `?percentage=` of a close (not both; the OMS checks the values). */
function closeParams(req: Request): { quantity?: string; percentage?: string } {
  const quantity = queryParam(req, 'quantity');
  const percentage = queryParam(req, 'percentage');
  if (quantity !== undefined && percentage !== undefined) throw errors.badInput('percentage', 'Give quantity or percentage, not both');
  for (const [name, value] of [
    ['quantity', quantity],
    ['percentage', percentage],
  ] as const)
    if (value !== undefined && !DECIMAL_SYNTAX.test(value)) throw errors.badInput(name, `${name} must be a decimal, e.g. "10"`);
  return { quantity, percentage };
}

export const ordersRoutes: RestRoute[] = [
  {
    method: 'DELETE',
    path: '/accounts/:accountId/positions/:symbol',
    scopes: ['write:orders'],
    placesOrder: true,
    document: /* GraphQL */ `
      mutation ClosePosition($input: ClosePositionInput!, $idempotencyKey: String) {
        order: closePosition(input: $input, idempotencyKey: $idempotencyKey) { ${ORDER} }
      }
    `,
    variables: (req) => {
      const symbol = String(req.params['symbol']).toUpperCase();
      if (!/^[A-Z0-9.]{1,12}$/.test(symbol)) throw errors.badInput('symbol', 'symbol must be an instrument symbol, e.g. AAPL');
      return { input: { accountId: uuidParam(req, 'accountId'), symbol, ...closeParams(req) }, idempotencyKey: idempotencyKey(req) };
    },
    shape: (data) => data.order,
  },
  {
    method: 'DELETE',
    path: '/accounts/:accountId/positions',
    scopes: ['write:orders'],
    placesOrder: true,
    document: /* GraphQL */ `
      mutation CloseAllPositions($accountId: ID!, $idempotencyKey: String) {
        orders: closeAllPositions(accountId: $accountId, idempotencyKey: $idempotencyKey) { ${ORDER} }
      }
    `,
    variables: (req) => ({ accountId: uuidParam(req, 'accountId'), idempotencyKey: idempotencyKey(req) }),
    shape: (data, req) => ({ accountId: req.params['accountId'], orders: data.orders }),
  },
  {
    method: 'GET',
    path: '/oms/:accountId/order/rules',
    scopes: ['read:orders'],
    document: /* GraphQL */ `
      query OrderRules($accountId: ID!, $symbol: String) { account(id: $accountId) { orderRules(symbol: $symbol) { ${RULES} } } }
    `,
    variables: (req) => ({ accountId: uuidParam(req, 'accountId'), symbol: symbolParam(req) }),
    shape: (data) => ownAccount<{ orderRules: unknown }>(data).orderRules,
  },
  {
    method: 'POST',
    path: '/oms/what-if',
    scopes: ['read:orders'],
    document: /* GraphQL */ `
      mutation WhatIf($input: OrderInput!) { whatIf: whatIfOrder(input: $input) { ${WHAT_IF} } }
    `,
    variables: (req) => ({ input: jsonBody(req, orderRequest) }),
    shape: (data) => data.whatIf,
  },
  {
    method: 'POST',
    path: '/oms/order',
    scopes: ['write:orders'],
    status: 201,
    placesOrder: true,
    document: /* GraphQL */ `
      mutation PlaceOrder($input: OrderInput!, $idempotencyKey: String) { order: placeOrder(input: $input, idempotencyKey: $idempotencyKey) { ${ORDER} } }
    `,
    variables: (req) => ({ input: jsonBody(req, orderRequest), idempotencyKey: idempotencyKey(req) }),
    shape: (data) => data.order,
  },
  {
    method: 'PUT',
    path: '/oms/order',
    scopes: ['write:orders'],
    placesOrder: true,
    document: /* GraphQL */ `
      mutation ReplaceOrder($input: ReplaceOrderInput!, $idempotencyKey: String) { order: replaceOrder(input: $input, idempotencyKey: $idempotencyKey) { ${ORDER} } }
    `,
    variables: (req) => ({ input: jsonBody(req, replaceOrderRequest), idempotencyKey: idempotencyKey(req) }),
    shape: (data) => data.order,
  },
  {
    method: 'DELETE',
    path: '/oms/order',
    scopes: ['write:orders'],
    document: /* GraphQL */ `
      mutation CancelOrder($orderId: ID!) { order: cancelOrder(orderId: $orderId) { ${ORDER} } }
    `,
    variables: (req) => ({ orderId: orderIdToCancel(req) }),
    shape: (data) => data.order,
  },
  {
    method: 'GET',
    path: '/oms/:accountId/orders',
    scopes: ['read:orders'],
    document: /* GraphQL */ `
      query Orders($accountId: ID!, $limit: Int, $cursor: String, $from: String, $to: String, $status: OrderStatus,
                   $statusGroup: OrderStatusGroup, $symbols: [String!]) {
        account(id: $accountId) {
          orders(limit: $limit, cursor: $cursor, from: $from, to: $to, status: $status, statusGroup: $statusGroup, symbols: $symbols) {
            nodes { ${ORDER} } nextCursor
          }
        }
      }
    `,
    variables: (req) => ({
      accountId: uuidParam(req, 'accountId'),
      ...listParams(req),
      ...statusFilter(req),
      symbols: symbolsFilter(req),
    }),
    shape: (data, req) => {
      const { orders } = ownAccount<{ orders: { nodes: unknown[]; nextCursor: string | null } }>(data);
      return { accountId: req.params['accountId'], orders: orders.nodes, nextCursor: orders.nextCursor };
    },
  },
  {
    method: 'GET',
    path: '/oms/:accountId/order/:orderId',
    scopes: ['read:orders'],
    document: /* GraphQL */ `
      query Order($accountId: ID!, $orderId: ID!) { account(id: $accountId) { order(id: $orderId) { ${ORDER} } } }
    `,
    variables: (req) => ({ accountId: uuidParam(req, 'accountId'), orderId: uuidParam(req, 'orderId') }),
    shape: (data) => {
      const { order } = ownAccount<{ order: unknown }>(data);
      if (!order) throw errors.notFound('Order', 'orderId');
      return order;
    },
  },
  {
    method: 'GET',
    path: '/oms/:accountId/order/by-client-id/:clientOrderId',
    scopes: ['read:orders'],
    document: /* GraphQL */ `
      query OrderByClientOrderId($accountId: ID!, $clientOrderId: String!) {
        account(id: $accountId) { orderByClientOrderId(clientOrderId: $clientOrderId) { ${ORDER} } }
      }
    `,
    variables: (req) => ({ accountId: uuidParam(req, 'accountId'), clientOrderId: clientOrderIdParam(req) }),
    shape: (data) => {
      const { orderByClientOrderId: order } = ownAccount<{ orderByClientOrderId: unknown }>(data);
      if (!order) throw errors.notFound('Order', 'clientOrderId');
      return order;
    },
  },
  {
    method: 'DELETE',
    path: '/oms/:accountId/order/by-client-id/:clientOrderId',
    scopes: ['write:orders'],
    document: /* GraphQL */ `
      mutation CancelOrderByClientOrderId($accountId: ID!, $clientOrderId: String!) {
        order: cancelOrderByClientOrderId(accountId: $accountId, clientOrderId: $clientOrderId) { ${ORDER} }
      }
    `,
    variables: (req) => ({ accountId: uuidParam(req, 'accountId'), clientOrderId: clientOrderIdParam(req) }),
    shape: (data) => data.order,
  },
  {
    method: 'GET',
    path: '/oms/:accountId/trades',
    scopes: ['read:orders'],
    document: /* GraphQL */ `
      query Trades($accountId: ID!, $limit: Int, $cursor: String, $from: String, $to: String, $symbol: String) {
        account(id: $accountId) { trades(limit: $limit, cursor: $cursor, from: $from, to: $to, symbol: $symbol) { nodes { ${TRADE} } nextCursor } }
      }
    `,
    variables: (req) => ({ accountId: uuidParam(req, 'accountId'), ...listParams(req), symbol: symbolParam(req) }),
    shape: (data, req) => {
      const { trades } = ownAccount<{ trades: { nodes: unknown[]; nextCursor: string | null } }>(data);
      return { accountId: req.params['accountId'], trades: trades.nodes, nextCursor: trades.nextCursor };
    },
  },
];
