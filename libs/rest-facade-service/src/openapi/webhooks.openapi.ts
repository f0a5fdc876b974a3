/**
 * The webhook management API (served by the auth app, reached through the facade). Nothing here
 * acts for a user: the app speaks for itself with its own client credentials, as at the token
 * endpoint, in the environment those credentials are for. Its operations are written out here
 * rather than through the REST operations' helper (their security is the app's, not a token);
 * their bodies are the contract's (../contract/webhooks.ts).
 */
const TAG = 'OAuth';
const json = (schema: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } });

const PROBLEMS: Record<number, string> = {
  400: 'Bad input: the `field` says which (an unknown event type, a bad `limit`, `cursor` or filter)',
  401: 'UNAUTHENTICATED: no client credentials, or wrong ones (with `WWW-Authenticate: Basic`)',
  403: 'FORBIDDEN: the credentials were sent the wrong way (e.g. HTTP Basic and a client assertion together)',
  404: "NOT_FOUND: no such endpoint or delivery among this app's own (`field` names the id)",
  409: 'CONFLICT: the endpoint is turned off (turn it on first), or the delivery was DROPPED because the user disconnected the app',
  415: 'The body is not JSON',
  422: 'UNPROCESSABLE on `url`: a URL this environment does not send to (not https, a private address, credentials or a fragment in it), or the limit of 10 endpoints per environment reached',
  429: 'RATE_LIMITED: too many failed client authentications from this address or for this app',
  503: 'Temporarily unavailable: nothing was changed; retry after `Retry-After` seconds',
};

const problem = (status: number) => ({
  description: PROBLEMS[status] ?? 'Error',
  ...(status === 429 || status === 503 ? { headers: { 'Retry-After': { $ref: '#/components/headers/Retry-After' } } } : {}),
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

/** A private_key_jwt app's credentials on a GET or DELETE, which have no body; HTTP Basic apps send none of these. */
const assertionQuery = [
  { name: 'client_id', description: "Optional: the client id, as the assertion's `iss`" },
  { name: 'client_assertion_type', description: '`urn:ietf:params:oauth:client-assertion-type:jwt-bearer`' },
  { name: 'client_assertion', description: 'A JWT signed with your key, `aud` the issuer, as at the token endpoint' },
].map(({ name, description }) => ({
  name,
  in: 'query',
  required: false,
  schema: { type: 'string' },
  description: `private_key_jwt apps: ${description}`,
}));

const pathId = (name: string, description: string) => ({
  name,
  in: 'path',
  required: true,
  schema: { type: 'string', format: 'uuid' },
  description,
});
const endpointId = pathId('endpointId', 'A webhook endpoint of this app (GET /webhooks/endpoints lists them)');
const deliveryId = pathId('deliveryId', 'A delivery of this app (GET /webhooks/deliveries lists them)');

const CLIENT_AUTH =
  "Authenticated with the app's own client credentials, exactly as at the token endpoint: HTTP Basic `client_id:client_secret`, or for private_key_jwt apps `client_assertion_type` and `client_assertion` in the JSON body (in the query on GET and DELETE). An app sees and changes its own endpoints and deliveries only, in the environment of the credentials it sends.";

/** One operation authenticated by the app's client credentials, with its success answer and its error statuses. */
function clientOperation(
  operationId: string,
  summary: string,
  ok: { status: number; description: string; schema?: string },
  errors: number[],
  more: { description?: string; parameters?: unknown[]; body?: { schema: string; required: boolean } } = {},
) {
  return {
    operationId,
    tags: [TAG],
    summary,
    description: more.description ? `${more.description}\n\n${CLIENT_AUTH}` : CLIENT_AUTH,
    security: [{ vendorClient: [] }],
    parameters: more.parameters ?? [],
    ...(more.body ? { requestBody: { required: more.body.required, content: json(more.body.schema) } } : {}),
    responses: {
      [ok.status]: { description: ok.description, ...(ok.schema ? { content: json(ok.schema) } : {}) },
      ...Object.fromEntries([...new Set([401, 403, 429, 503, ...errors])].sort().map((s) => [s, problem(s)])),
    },
  };
}

const deliveryFilters = [
  { name: 'endpointId', in: 'query', required: false, schema: { type: 'string', format: 'uuid' }, description: 'One endpoint only' },
  { name: 'eventType', in: 'query', required: false, schema: { type: 'string' }, description: 'One event type only, e.g. `order.filled`' },
  {
    name: 'status',
    in: 'query',
    required: false,
    schema: { type: 'string', enum: ['PENDING', 'DELIVERED', 'FAILED', 'DROPPED'] },
  },
  { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
  { name: 'cursor', in: 'query', required: false, schema: { type: 'string' }, description: '`nextCursor` of the previous page' },
];

export const webhookPaths = {
  '/webhooks/event-types': {
    get: {
      operationId: 'listWebhookEventTypes',
      tags: [TAG],
      summary: "Every webhook event type, with the scope a user's grant must hold for the app to receive it",
      security: [],
      responses: { 200: { description: 'The event types', content: json('WebhookEventTypeList') }, 503: problem(503) },
    },
  },
  '/webhooks/endpoints': {
    get: clientOperation(
      'listWebhookEndpoints',
      "The app's webhook endpoints",
      { status: 200, description: 'The endpoints', schema: 'WebhookEndpointList' },
      [],
      {
        parameters: assertionQuery,
      },
    ),
    post: clientOperation(
      'createWebhookEndpoint',
      'Register a webhook endpoint; the answer holds its signing secret, shown this once',
      { status: 201, description: 'The endpoint and its signing secret', schema: 'WebhookEndpointWithSecret' },
      [400, 415, 422],
      {
        description:
          'Outside DEV only https URLs to public addresses are taken; DEV also takes http(s) to localhost, 127.0.0.1 and [::1]. A host name is resolved now, and again at every delivery. At most 10 endpoints per environment.',
        body: { schema: 'WebhookEndpointRequest', required: true },
      },
    ),
  },
  '/webhooks/endpoints/{endpointId}': {
    patch: clientOperation(
      'updateWebhookEndpoint',
      'Change a webhook endpoint (URL, event types, description), or turn it off and on',
      { status: 200, description: 'The endpoint as it now is', schema: 'WebhookEndpoint' },
      [400, 404, 415, 422],
      {
        description:
          'While an endpoint is off, nothing is sent to it and events that happen are not queued for it; deliveries queued before wait. Turning it on again clears `disabledReason`, starts its failure clock afresh and sends what waited; a delivery given up (FAILED) is sent again with redeliver.',
        parameters: [endpointId],
        body: { schema: 'WebhookEndpointUpdate', required: true },
      },
    ),
    delete: clientOperation(
      'deleteWebhookEndpoint',
      'Remove a webhook endpoint and its delivery log',
      { status: 204, description: 'Removed' },
      [404],
      {
        parameters: [endpointId, ...assertionQuery],
      },
    ),
  },
  '/webhooks/endpoints/{endpointId}/rotate-secret': {
    post: clientOperation(
      'rotateWebhookSecret',
      'A new signing secret for the endpoint; the old one keeps signing beside it for 24 hours',
      { status: 200, description: 'The endpoint and its new signing secret, shown this once', schema: 'WebhookEndpointWithSecret' },
      [404],
      {
        description:
          'For 24 hours every message carries two signatures in `webhook-signature`, one by each secret, so a receiver can switch to the new secret without missing a message.',
        parameters: [endpointId],
        body: { schema: 'WebhookClientCredentials', required: false },
      },
    ),
  },
  '/webhooks/deliveries': {
    get: clientOperation(
      'listWebhookDeliveries',
      "The app's delivery log, newest first, each delivery with every attempt",
      { status: 200, description: 'A page of deliveries', schema: 'WebhookDeliveryList' },
      [400],
      { parameters: [...deliveryFilters, ...assertionQuery] },
    ),
  },
  '/webhooks/deliveries/{deliveryId}/redeliver': {
    post: clientOperation(
      'redeliverWebhook',
      'Send a delivery again, now, with the same `webhook-id`',
      { status: 202, description: 'Queued to be sent now', schema: 'WebhookDelivery' },
      [404, 409],
      {
        description:
          'Any delivery but a DROPPED one (the user disconnected the app before it was sent); its attempts start again from the first. Refused while the endpoint is turned off.',
        parameters: [deliveryId],
        body: { schema: 'WebhookClientCredentials', required: false },
      },
    ),
  },
};
