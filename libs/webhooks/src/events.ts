import { z } from '@trading/config';

/**
 * The events a vendor's webhook endpoint may subscribe to, with the scope a user's grant must
 * hold for the app to receive it. An app hears of a user's orders only if the user let it read
 * them, of money only if it may read banking; `grant.revoked` goes to every app a user
 * disconnects (its last event about that user).
 */
export const WEBHOOK_EVENTS = {
  'order.accepted': { scope: 'read:orders', description: 'An order was accepted and is working' },
  'order.partially_filled': { scope: 'read:orders', description: 'An order filled in part; the rest keeps working' },
  'order.filled': { scope: 'read:orders', description: 'An order filled completely' },
  'order.cancelled': { scope: 'read:orders', description: 'An order was cancelled (by the user, or by the platform, with a reason)' },
  'order.rejected': { scope: 'read:orders', description: 'An order was rejected, with its reason' },
  'order.replaced': { scope: 'read:orders', description: 'An order was replaced by another (`replacedBy` names it)' },
  'order.expired': { scope: 'read:orders', description: 'An order reached the end of its time in force unfilled or partly filled' },
  'funding.deposit.settled': { scope: 'read:banking', description: 'A deposit settled: the cash is in the account' },
  'funding.deposit.failed': { scope: 'read:banking', description: 'A deposit failed; nothing was credited' },
  'funding.withdrawal.settled': { scope: 'read:banking', description: 'A withdrawal settled: the cash left the account' },
  'funding.withdrawal.failed': { scope: 'read:banking', description: 'A withdrawal failed; its cash is available again' },
  'grant.revoked': { scope: null, description: 'The user disconnected the app: no more events about this user' },
} as const satisfies Record<string, { scope: string | null; description: string }>;

export type WebhookEventType = keyof typeof WEBHOOK_EVENTS;
export const WEBHOOK_EVENT_TYPES = Object.keys(WEBHOOK_EVENTS) as WebhookEventType[];

export const isWebhookEventType = (value: unknown): value is WebhookEventType =>
  typeof value === 'string' && Object.hasOwn(WEBHOOK_EVENTS, value);

/**
 * What a webhook message's body is: `type`, the event's own `id` (the same as the
 * `webhook-id` header, stable across retries), when it happened, and `data`:
 * - order events: `{ order }`, the order as `GET /v1/oms/{accountId}/order/{orderId}` shows it, without fills;
 * - funding events: `{ transaction }`, the funding transaction as the banking endpoints show it;
 * - `grant.revoked`: `{ subject, clientId, revokedAt }`, `subject` being the user as this app's ID tokens name them.
 */
export const webhookEnvelope = z.object({
  id: z.string().regex(/^msg_[0-9a-f]{32}$/),
  type: z.enum(WEBHOOK_EVENT_TYPES as [WebhookEventType, ...WebhookEventType[]]),
  timestamp: z.iso.datetime(),
  data: z.record(z.string(), z.unknown()),
});

/** A message id from the event id it announces: the same on every retry and redelivery. */
export const messageIdOf = (eventId: string): string => `msg_${eventId.replace(/-/g, '').toLowerCase()}`;

/**
 * The webhook event an order's change is, from the order as it now stands. NEW is `order.accepted`;
 * a CANCELLED order that names its replacement is `order.replaced`. Null for a status no event names.
 */
export function orderEventType(order: { status?: unknown; replacedBy?: unknown }): WebhookEventType | null {
  switch (order.status) {
    case 'NEW':
      return 'order.accepted';
    case 'PARTIALLY_FILLED':
      return 'order.partially_filled';
    case 'FILLED':
      return 'order.filled';
    case 'CANCELLED':
      return order.replacedBy ? 'order.replaced' : 'order.cancelled';
    case 'REJECTED':
      return 'order.rejected';
    case 'EXPIRED':
      return 'order.expired';
    default:
      return null;
  }
}

/** The webhook event a funding transaction's end is: COMPLETED settles, REJECTED fails; a cancel by the user is none. */
export function fundingEventType(transaction: { type?: unknown; state?: unknown }): WebhookEventType | null {
  const kind = transaction.type === 'DEPOSIT' ? 'deposit' : transaction.type === 'WITHDRAWAL' ? 'withdrawal' : null;
  if (!kind) return null;
  if (transaction.state === 'COMPLETED') return `funding.${kind}.settled`;
  if (transaction.state === 'REJECTED') return `funding.${kind}.failed`;
  return null;
}
