import { z } from '@trading/config';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_EVENTS, webhookEnvelope, type WebhookEventType } from '@trading/webhooks';
import { fundingTransaction } from './banking';
import { named, text, timestamp } from './kit';
import { orderUpdate } from './orders';

/**
 * What a vendor's webhook endpoint receives (Standard Webhooks): the signed headers, and for
 * each event type the envelope with that type's `data`. The AsyncAPI document is made from these.
 */
const o = z.strictObject;

export const webhookOrderData = named(
  'WebhookOrderData',
  o({ order: orderUpdate }),
  'The `data` of an order event: the order as it now stands, without its fills',
);
export const webhookFundingData = named(
  'WebhookFundingData',
  o({ transaction: fundingTransaction }),
  'The `data` of a funding event: the deposit or withdrawal as the banking endpoints show it',
);
export const webhookGrantRevokedData = named(
  'WebhookGrantRevokedData',
  o({
    subject: text.meta({ description: "The user, as this app's ID tokens name them (`sub`)" }),
    clientId: text.meta({ description: 'The app the user disconnected' }),
    revokedAt: timestamp,
  }),
  'The `data` of `grant.revoked`: the last event this app gets about the user',
);

export const webhookHeaders = named(
  'WebhookHeaders',
  // Open: a request carries other headers too (content-type, user-agent…).
  z.looseObject({
    'webhook-id': webhookEnvelope.shape.id.meta({
      description: "The message id, the body's `id`: the same on every retry, so a receiver drops repeats by it",
    }),
    'webhook-timestamp': z
      .string()
      .regex(/^\d+$/)
      .meta({ description: 'When this attempt was sent, in Unix seconds; refuse a message far from your clock (replays)' }),
    'webhook-signature': z
      .string()
      .regex(/^v1,[A-Za-z0-9+/]+={0,2}( v1,[A-Za-z0-9+/]+={0,2})*$/)
      .meta({
        description:
          "Space-separated `v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed with the app's signing secret (`whsec_…`, base64 after the prefix); more than one while a secret is being rotated, any one matching is enough",
      }),
  }),
  'The Standard Webhooks headers every webhook request carries',
);

/** Each event type's `data` (one per family: order, funding, the grant). */
function dataOf(type: WebhookEventType): z.ZodType {
  if (type.startsWith('order.')) return webhookOrderData;
  if (type.startsWith('funding.')) return webhookFundingData;
  if (type === 'grant.revoked') return webhookGrantRevokedData;
  throw new Error(`No data schema for the webhook event ${type}`);
}

/** `order.partially_filled` → `OrderPartiallyFilledWebhook`. */
const schemaName = (type: string) =>
  `${type
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('')}Webhook`;

/** The whole body of each event type: the envelope, `type` fixed to that type and `data` its own. */
export const webhookEventSchemas = {} as Record<WebhookEventType, z.ZodType>;
for (const type of WEBHOOK_EVENT_TYPES)
  webhookEventSchemas[type] = named(
    schemaName(type),
    webhookEnvelope.extend({ type: z.literal(type), data: dataOf(type) }),
    WEBHOOK_EVENTS[type].description,
  );
