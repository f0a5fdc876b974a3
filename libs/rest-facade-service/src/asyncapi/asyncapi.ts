import { SCOPE_DESCRIPTIONS } from '@trading/auth';
import { z } from '@trading/config';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_EVENTS } from '@trading/webhooks';
import {
  contract,
  fundingTransaction,
  marketQuote,
  orderEvent,
  orderUpdate,
  trade,
  webhookEventSchemas,
  webhookHeaders,
} from '../contract';
import { MARKET_EVENTS_PATH, MARKET_EVENTS_SCOPES } from '../market-events/market-events.route';
import { ORDER_EVENTS_PATH, ORDER_EVENTS_SCOPES } from '../order-events/order-events.route';

/**
 * The AsyncAPI 3.0 description of what this API pushes rather than answers: the two
 * Server-Sent Events streams (live order events, live quotes) and the webhooks a vendor's
 * endpoint receives. Served at /v1/asyncapi.json beside the OpenAPI document, and made from the
 * same zod contract (../contract), so a payload documented here is the one validated and sent.
 */

type Schema = Record<string, unknown>;

/** AsyncAPI's default schema format is JSON Schema draft-07 (with a few additions). */
const SCHEMA_PREFIX = '#/components/schemas/';
const ref = (to: string) => ({ $ref: to });
const schemaRef = (schema: z.ZodType) => ref(`${SCHEMA_PREFIX}${contract.get(schema)!.id}`);

/** The contract's named schemas in draft-07, only those the messages reach (directly or through another). */
function componentSchemas(roots: z.ZodType[]): Record<string, Schema> {
  const { schemas } = z.toJSONSchema(contract, { target: 'draft-07', uri: (id) => `${SCHEMA_PREFIX}${id}` }) as {
    schemas: Record<string, Schema>;
  };
  const reached = new Map<string, Schema>();
  const visit = (name: string) => {
    if (reached.has(name)) return;
    const { $schema: _s, $id: _i, ...schema } = schemas[name]!;
    reached.set(name, schema);
    for (const [, to] of JSON.stringify(schema).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) visit(to!);
  };
  for (const root of roots) visit(contract.get(root)!.id);
  return Object.fromEntries([...reached].sort(([a], [b]) => a.localeCompare(b)));
}

/** `{ reason }`, the data of `event: gap` and `event: end`: the order events' own union's member. */
function noticeSchema(): Schema {
  const notice = orderEvent.options.find((option) => 'reason' in option.shape)!;
  const { $schema: _s, ...schema } = z.toJSONSchema(notice, { target: 'draft-07' }) as Schema;
  return schema;
}

const sse = (name: string, summary: string, payload: Schema) => ({
  name,
  title: `event: ${name}`,
  summary,
  contentType: 'application/json',
  payload,
});

function streamMessages() {
  const notice = noticeSchema();
  return {
    order: sse('order', 'An order changed state: the order as it now stands, without its fills', schemaRef(orderUpdate)),
    fill: sse('fill', 'An execution of one of the account’s orders', schemaRef(trade)),
    gap: sse(
      'gap',
      'Events may be missing (no longer kept after Last-Event-ID, no longer verifiable, or the event store restarted): read the orders and trades again, then rely on the events that follow. Has no `id`, so Last-Event-ID stays put.',
      notice,
    ),
    end: sse('end', 'The stream ends, saying why (session or grant revoked, token expired); reconnect only with a valid token', notice),
    quote: sse('quote', 'A price of one of the symbols changed: its top of book now', schemaRef(marketQuote)),
  };
}

function webhookMessages() {
  return Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => [
      type,
      {
        name: type,
        title: type,
        summary: WEBHOOK_EVENTS[type].description,
        description: WEBHOOK_EVENTS[type].scope
          ? `Sent only while the user's grant to the app holds \`${WEBHOOK_EVENTS[type].scope}\`.`
          : "Sent to every app the user disconnects, whatever the grant's scopes.",
        contentType: 'application/json',
        headers: schemaRef(webhookHeaders),
        payload: schemaRef(webhookEventSchemas[type]),
      },
    ]),
  );
}

/** A channel's messages as references to the components. */
const messagesOf = (names: string[]) => Object.fromEntries(names.map((name) => [name, ref(`#/components/messages/${name}`)]));
/** An operation's messages: the channel's own. */
const channelMessages = (channel: string, names: string[]) => names.map((name) => ref(`#/channels/${channel}/messages/${name}`));

const lastEventId = {
  type: 'string',
  pattern: '^\\d+-\\d+$',
  description: 'The `id` of the last event received, to resume after a reconnect (the `Last-Event-ID` header wins)',
};
const httpGet = (query: Schema) => ({ http: { method: 'GET', query, bindingVersion: '0.3.0' } });

const ORDER_MESSAGES = ['order', 'fill', 'gap', 'end'];
const MARKET_MESSAGES = ['quote', 'end'];

function channels() {
  return {
    orderEvents: {
      address: ORDER_EVENTS_PATH.replace(/:(\w+)/g, '{$1}'),
      title: 'Live order events',
      description:
        'Server-Sent Events (`GET`, `text/event-stream`) of one account’s orders: every state change (`event: order`) and every fill (`event: fill`), each with an `id`. Reconnect with `Last-Event-ID` to get everything after it, then the live events, with no gap and no repeat; `event: gap` says when that cannot be promised. A comment line keeps the stream open; `event: end` closes it.',
      servers: [ref('#/servers/api')],
      parameters: { accountId: { description: 'The account (a uuid); it must be the caller’s' } },
      messages: messagesOf(ORDER_MESSAGES),
    },
    marketEvents: {
      address: MARKET_EVENTS_PATH,
      title: 'Live quotes',
      description:
        'Server-Sent Events (`GET`, `text/event-stream`) of live quotes for `symbols`: first the current quote of each, then `event: quote` each time one changes. Quotes are not replayed on a reconnect (the latest is what counts).',
      servers: [ref('#/servers/api')],
      messages: messagesOf(MARKET_MESSAGES),
    },
    webhooks: {
      address: '{webhookPath}',
      title: 'Webhooks',
      description:
        'The URL the vendor registered for its app (`vendor` server and this path). Each event is a `POST` with a JSON body (the envelope: `id`, `type`, `timestamp`, `data`) and the Standard Webhooks headers; answer 2xx quickly. A message that fails is retried with the same `webhook-id`, so receivers drop repeats by it.',
      servers: [ref('#/servers/vendor')],
      parameters: { webhookPath: { description: 'The path of the registered webhook URL', examples: ['/trading/webhooks'] } },
      messages: messagesOf(WEBHOOK_EVENT_TYPES),
    },
  };
}

function operations() {
  return {
    receiveOrderEvents: {
      action: 'receive',
      channel: ref('#/channels/orderEvents'),
      summary: 'Follow an account’s orders and fills',
      security: [ref('#/components/securitySchemes/readOrders'), ref('#/components/securitySchemes/patSession')],
      bindings: httpGet({ type: 'object', properties: { lastEventId } }),
      messages: channelMessages('orderEvents', ORDER_MESSAGES),
    },
    receiveMarketEvents: {
      action: 'receive',
      channel: ref('#/channels/marketEvents'),
      summary: 'Follow live quotes',
      security: [ref('#/components/securitySchemes/readMarket'), ref('#/components/securitySchemes/patSession')],
      bindings: httpGet({
        type: 'object',
        required: ['symbols'],
        properties: { symbols: { type: 'string', description: 'Comma-separated instrument symbols, 1 to 100, e.g. `AAPL,MSFT`' } },
      }),
      messages: channelMessages('marketEvents', MARKET_MESSAGES),
    },
    receiveWebhooks: {
      action: 'receive',
      channel: ref('#/channels/webhooks'),
      summary: 'Receive webhook events at the vendor’s endpoint',
      description:
        'Check `webhook-signature` over the raw body before trusting it, and `webhook-timestamp` against your clock. An app gets order events only while the user’s grant holds `read:orders`, funding events only with `read:banking`.',
      bindings: { http: { method: 'POST', bindingVersion: '0.3.0' } },
      messages: channelMessages('webhooks', WEBHOOK_EVENT_TYPES),
    },
  };
}

const oauth2 = (scopes: readonly string[], base: string) => ({
  type: 'oauth2',
  description: `A vendor app's access token with ${scopes.map((s) => `\`${s}\``).join(', ')}, as \`Authorization: Bearer\` (or \`DPoP\` with a proof, for a bound token)`,
  flows: {
    authorizationCode: {
      authorizationUrl: `${base}/oauth/authorize`,
      tokenUrl: `${base}/oauth/token`,
      refreshUrl: `${base}/oauth/token`,
      availableScopes: SCOPE_DESCRIPTIONS,
    },
  },
  scopes: [...scopes],
});

function securitySchemes(base: string) {
  return {
    readOrders: oauth2(ORDER_EVENTS_SCOPES, base),
    readMarket: oauth2(MARKET_EVENTS_SCOPES, base),
    patSession: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: "A user's own script: the session `POST /pat/login` returns for a personal access token, as `Authorization: Bearer`",
    },
  };
}

/** This deployment's API (its public base URL, e.g. https://api.trading.example/v1) and the vendor's webhook endpoint. */
function servers(publicUrl: string) {
  const url = new URL(publicUrl);
  return {
    api: {
      host: url.host,
      protocol: url.protocol.replace(/:$/, ''),
      pathname: url.pathname.replace(/\/+$/, ''),
      title: 'Trading API',
      description: 'This deployment: the event streams, with a bearer token as for every other call',
    },
    vendor: {
      host: '{vendorHost}',
      protocol: 'https',
      title: 'Vendor webhook endpoint',
      description: 'The vendor’s own HTTPS endpoint, registered for its app: the platform POSTs every webhook there',
      variables: { vendorHost: { description: 'The host (and port) of the registered webhook URL', examples: ['hooks.vendor.example'] } },
    },
  };
}

/**
 * The document for a deployment whose public base URL (FACADE_PUBLIC_URL's first) is
 * `publicUrl`. Operations are written from the client's side: an app receives the streams, and
 * its webhook endpoint receives the webhooks (which the platform sends).
 */
export function asyncApiDocument(publicUrl = 'http://localhost:8080/v1') {
  const base = publicUrl.replace(/\/+$/, '');
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Trading API events',
      version: '1.0.0',
      description:
        "What the Trading API pushes: live order events and live quotes as Server-Sent Events (`GET` with a token, answered `text/event-stream`; each block is `id:`, `event:` and `data:` with one JSON message), and webhooks a vendor app receives at its registered URL (`POST`, JSON, signed per Standard Webhooks). Operations are written from the client's side: `receive` for the streams an app reads, and `receive` for the webhooks its endpoint is sent. Payloads are the same schemas as the REST answers (see the OpenAPI document at /v1/openapi.json).",
    },
    defaultContentType: 'application/json',
    servers: servers(base),
    channels: channels(),
    operations: operations(),
    components: {
      schemas: componentSchemas([
        orderUpdate,
        trade,
        marketQuote,
        fundingTransaction,
        webhookHeaders,
        ...Object.values(webhookEventSchemas),
      ]),
      messages: { ...streamMessages(), ...webhookMessages() },
      securitySchemes: securitySchemes(base),
    },
  };
}
