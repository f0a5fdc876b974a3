/** The DEV sandbox's operations (schemas in ../contract/sandbox.ts; answers as GET order / the funding transaction). */
import type { Operations } from './kit';

const orderId = {
  name: 'orderId',
  in: 'path' as const,
  required: true,
  schema: { type: 'string', format: 'uuid' },
  description: "One of the caller's working orders (NEW or PARTIALLY_FILLED)",
};
const DEV_ONLY = 'Only tokens issued by a DEV deployment (any other environment: 403 naming it).';

export const sandboxOperations: Operations = {
  '/sandbox/orders/{orderId}/fill': {
    post: {
      summary: `Sandbox: fill a working order in part or in full, through the execution engine's own fill (the trade, the order's events, the hold settled), without moving the market. Body optional. ${DEV_ONLY} A closed order is a 409; a quantity or price the order does not allow a 422 naming it.`,
      scopes: ['write:orders'],
      params: [orderId],
      body: 'SandboxFillRequest',
      bodyOptional: true,
      ok: { status: 200, schema: 'Order' },
      errors: [404, 409, 415, 422],
    },
  },
  '/sandbox/orders/{orderId}/reject': {
    post: {
      summary: `Sandbox: reject a working order with a reason; its hold is released as on any close. Body optional. ${DEV_ONLY} A closed order is a 409.`,
      scopes: ['write:orders'],
      params: [orderId],
      body: 'SandboxRejectRequest',
      bodyOptional: true,
      ok: { status: 200, schema: 'Order' },
      errors: [404, 409, 415],
    },
  },
  '/sandbox/orders/{orderId}/expire': {
    post: {
      summary: `Sandbox: expire a working order as the end of its session does; its hold is released. ${DEV_ONLY} A closed order is a 409.`,
      scopes: ['write:orders'],
      params: [orderId],
      ok: { status: 200, schema: 'Order' },
      errors: [404, 409],
    },
  },
  '/sandbox/funding/{transactionId}/fail': {
    post: {
      summary: `Sandbox: a PENDING deposit or withdrawal fails now (REJECTED with the reason), as clearing rejects one; a withdrawal's held cash comes back. Body optional. ${DEV_ONLY} A transaction no longer PENDING is a 409.`,
      scopes: ['write:banking'],
      params: [
        {
          name: 'transactionId',
          in: 'path',
          required: true,
          schema: { type: 'string', format: 'uuid' },
          description: "One of the caller's PENDING funding transactions",
        },
      ],
      body: 'SandboxFailFundingRequest',
      bodyOptional: true,
      ok: { status: 200, schema: 'FundingTransaction' },
      errors: [404, 409, 415],
    },
  },
};
