import type { Request } from 'express';
import type { z } from '@trading/config';
import { jsonBody, uuidParam } from './params';
import { sandboxFailFundingRequest, sandboxFillRequest, sandboxRejectRequest } from '../contract';
import { TRANSACTION } from './banking.routes';
import { ORDER } from './orders.routes';
import type { RestRoute } from './route';

/**
 * The DEV sandbox: a vendor drives its own orders and transfers to an outcome on demand. The
 * services refuse tokens of any other environment (403 naming it) and anyone else's order or
 * transfer (404); each answers the order or transaction as its GET does.
 */

/** The body is optional: none at all is an empty request; one sent must be JSON of the schema. */
function optionalBody<S extends z.ZodType>(req: Request, schema: S): z.output<S> | Record<string, never> {
  // Nothing sent (no type, no bytes): every field takes its default.
  if (!req.get('content-type') && !Number(req.get('content-length') ?? 0) && !req.get('transfer-encoding')) return {};
  return jsonBody(req, schema);
}

export const sandboxRoutes: RestRoute[] = [
  {
    method: 'POST',
    path: '/sandbox/orders/:orderId/fill',
    scopes: ['write:orders'],
    document: /* GraphQL */ `
      mutation SandboxFillOrder($orderId: ID!, $input: SandboxFillInput) {
        order: sandboxFillOrder(orderId: $orderId, input: $input) { ${ORDER} }
      }
    `,
    variables: (req) => ({ orderId: uuidParam(req, 'orderId'), input: optionalBody(req, sandboxFillRequest) }),
    shape: (data) => data.order,
  },
  {
    method: 'POST',
    path: '/sandbox/orders/:orderId/reject',
    scopes: ['write:orders'],
    document: /* GraphQL */ `
      mutation SandboxRejectOrder($orderId: ID!, $reason: String) {
        order: sandboxRejectOrder(orderId: $orderId, reason: $reason) { ${ORDER} }
      }
    `,
    variables: (req) => ({ orderId: uuidParam(req, 'orderId'), reason: optionalBody(req, sandboxRejectRequest).reason }),
    shape: (data) => data.order,
  },
  {
    method: 'POST',
    path: '/sandbox/orders/:orderId/expire',
    scopes: ['write:orders'],
    document: /* GraphQL */ `
      mutation SandboxExpireOrder($orderId: ID!) { order: sandboxExpireOrder(orderId: $orderId) { ${ORDER} } }
    `,
    variables: (req) => ({ orderId: uuidParam(req, 'orderId') }),
    shape: (data) => data.order,
  },
  {
    method: 'POST',
    path: '/sandbox/funding/:transactionId/fail',
    scopes: ['write:banking'],
    document: /* GraphQL */ `
      mutation SandboxFailFunding($transactionId: ID!, $reason: String) {
        transaction: sandboxFailFundingTransaction(transactionId: $transactionId, reason: $reason) { ${TRANSACTION} }
      }
    `,
    variables: (req) => ({
      transactionId: uuidParam(req, 'transactionId'),
      reason: optionalBody(req, sandboxFailFundingRequest).reason,
    }),
    shape: (data) => data.transaction,
  },
];
