import { z } from '@trading/config';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_EVENTS, webhookEnvelope, type WebhookEventType } from '@trading/webhooks';
import { fundingTransaction } from './banking';
import { cursor, id, named, text, timestamp } from './kit';
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

/*
 * The webhook management API (`/webhooks/*`, served by the auth app): an app registers and
 * changes its endpoints and reads its delivery log with its own client credentials.
 */
const eventType = z.enum(WEBHOOK_EVENT_TYPES as [WebhookEventType, ...WebhookEventType[]]);
const nullableTime = timestamp.nullable();
const endpointDescription = z
  .string()
  .min(1)
  .max(200)
  .meta({ description: 'Your own note, 1 to 200 characters without control characters' });

/** A private_key_jwt app's credentials, sent in the JSON body (HTTP Basic apps leave them out). */
const clientAssertion = {
  client_id: text.optional().meta({ description: "private_key_jwt only, optional: the client id, as the assertion's `iss`" }),
  client_assertion_type: z
    .literal('urn:ietf:params:oauth:client-assertion-type:jwt-bearer')
    .optional()
    .meta({ description: 'private_key_jwt apps, instead of HTTP Basic' }),
  client_assertion: text
    .optional()
    .meta({ description: 'private_key_jwt apps: a JWT signed with your key, `aud` the issuer, as at the token endpoint' }),
};

export const webhookEventTypeList = named(
  'WebhookEventTypeList',
  o({
    eventTypes: z.array(
      o({
        type: eventType,
        scope: text.nullable().meta({
          description: "The scope the user's grant must hold for the app to hear of it; null: sent whatever the scopes (grant.revoked)",
        }),
        description: text,
      }),
    ),
  }),
  'Every event type an endpoint may subscribe to',
);

export const webhookEndpointRequest = named(
  'WebhookEndpointRequest',
  z.object({
    url: z
      .string()
      .max(2000)
      .meta({
        description:
          'Where the events are sent: https to a public address; in DEV also http(s) to localhost, 127.0.0.1 or [::1]. No credentials, no fragment',
        examples: ['https://vendor.example/hooks/trading'],
      }),
    eventTypes: z
      .array(eventType)
      .min(1)
      .optional()
      .meta({ description: 'The event types to send (each once); left out: every type, those added later included' }),
    enabled: z.boolean().optional().meta({ description: 'Default true' }),
    description: endpointDescription.optional(),
    ...clientAssertion,
  }),
  'A new webhook endpoint',
);

export const webhookEndpointUpdate = named(
  'WebhookEndpointUpdate',
  z.object({
    url: webhookEndpointRequest.shape.url.optional(),
    eventTypes: z.array(eventType).min(1).nullable().optional().meta({ description: 'The event types to send; null: every type' }),
    enabled: z.boolean().optional().meta({
      description: 'false stops sending (deliveries wait); true turns it on again and starts its failure clock afresh',
    }),
    description: endpointDescription.nullable().optional().meta({ description: 'null clears it' }),
    ...clientAssertion,
  }),
  'Changes to a webhook endpoint: a field left out keeps its value',
);

export const webhookClientCredentials = named(
  'WebhookClientCredentials',
  z.object(clientAssertion),
  'No fields of its own: only a private_key_jwt app sends a body, with its client assertion',
);

export const webhookEndpoint = named(
  'WebhookEndpoint',
  o({
    id,
    clientId: text.meta({ description: 'The client id of the environment the endpoint belongs to' }),
    environment: z.enum(['DEV', 'UAT', 'PROD']),
    url: text,
    eventTypes: z.array(eventType),
    enabled: z.boolean(),
    description: text.nullable(),
    disabledReason: text.nullable().meta({ description: 'Why the platform turned it off (every delivery failing for days), or null' }),
    failingSince: nullableTime.meta({ description: 'Since when every attempt has failed, or null while it answers' }),
    createdAt: timestamp,
    updatedAt: timestamp,
  }),
  "One of the app's webhook endpoints (the signing secret is never shown again)",
);

export const webhookEndpointWithSecret = named(
  'WebhookEndpointWithSecret',
  webhookEndpoint.extend({
    secret: z
      .string()
      .regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/)
      .meta({
        description: 'The signing secret, shown this once: keep it where your receiver reads it (only it can verify the signatures)',
        examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
      }),
  }),
  'The endpoint with its new signing secret (registration and rotation only)',
);

export const webhookEndpointList = named('WebhookEndpointList', o({ endpoints: z.array(webhookEndpoint) }));

export const webhookAttempt = named(
  'WebhookAttempt',
  o({
    attemptedAt: timestamp,
    statusCode: z
      .int()
      .nullable()
      .meta({ description: "The receiver's HTTP status; null when none came (address refused, timeout, connection failed)" }),
    durationMs: z.int(),
    error: text.nullable(),
    responseSnippet: text.nullable().meta({ description: 'The first 1 KiB the receiver answered, as text' }),
  }),
  'One attempt to send a delivery',
);

export const webhookDelivery = named(
  'WebhookDelivery',
  o({
    id,
    endpointId: id,
    messageId: webhookEnvelope.shape.id.meta({
      description: "The `webhook-id` header and the body's `id`: the same on every attempt and redelivery",
    }),
    eventType,
    status: z.enum(['PENDING', 'DELIVERED', 'FAILED', 'DROPPED']).meta({
      description:
        'PENDING: due (again) at `nextAttemptAt`; DELIVERED: answered 2xx; FAILED: every attempt of the schedule failed; DROPPED: the user disconnected the app (or narrowed its access) before it was sent',
    }),
    attempts: z.int(),
    nextAttemptAt: nullableTime,
    deliveredAt: nullableTime,
    createdAt: timestamp,
    lastStatusCode: z.int().nullable(),
    lastError: text.nullable(),
    attemptLog: z.array(webhookAttempt),
  }),
  'One event sent to one endpoint, with every attempt',
);

export const webhookDeliveryList = named(
  'WebhookDeliveryList',
  o({ deliveries: z.array(webhookDelivery), nextCursor: cursor }),
  'The delivery log, newest first',
);
