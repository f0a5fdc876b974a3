import { serviceIdentityFields } from '@trading/auth';
import { apiLimitSchema, edgeSessionSchema, commonSchema, field, loadConfig, oauthLimitSchema, z } from '@trading/config';

export { oauthLimitSchema };

const facadeConfigSchema = z.object({
  ...commonSchema,
  ...apiLimitSchema,
  ...edgeSessionSchema,
  ...serviceIdentityFields('rest-facade'),
  ...oauthLimitSchema,
  /** Public listener: /v1 and the API docs. */
  FACADE_PORT: field.port(8080),
  /** Internal listener: /metrics and a detailed /readyz. */
  FACADE_INTERNAL_PORT: field.port(8180),
  /** The gateway's internal GraphQL endpoint, where every REST call is translated to (with signed claims). */
  GATEWAY_URL: field.url().default('http://localhost:4100/graphql'),
  /** The auth app's internal listener: /v1/oauth/* and /v1/pat/* are proxied there (with the signed client address and, for a signed-in caller, claims). */
  AUTH_INTERNAL_URL: field.url().default('http://localhost:8181'),
  AUTH_JWKS_URL: field.url().default('http://localhost:8081/.well-known/jwks.json'),
  AUTH_ISSUER: field.url().default('http://localhost:8081'),
  /**
   * {base_url}: the public URL clients call /v1 at (auth's AUTH_API_URL), and any alias they may
   * use, comma-separated. DPoP proofs (RFC 9449) must name the request's URL under one of these
   * (`htu`); the Host header is never trusted for it.
   */
  FACADE_PUBLIC_URL: field.urls('http://localhost:8080/v1'),
  /** The OMS's settlement stream: live order events (GET /v1/oms/{accountId}/events) are read from it. */
  EVENTS_STREAM: z.string().min(1).default('trading:oms:events'),
  /** An event stream's heartbeat; the caller's session is checked again at each one. */
  ORDER_EVENTS_HEARTBEAT_MS: z.coerce.number().int().min(50).max(60_000).default(15_000),
  /** Open event streams per user, over every facade instance (counted in Redis). */
  ORDER_EVENTS_MAX_STREAMS_PER_USER: z.coerce.number().int().positive().default(5),
  /**
   * How far back a reconnect with Last-Event-ID is replayed: settlement stream entries (every
   * user's) read back from the newest. An id further back gets `event: gap` and the events of
   * that many entries; it bounds what one replay costs.
   */
  ORDER_EVENTS_REPLAY_MAX_ENTRIES: z.coerce.number().int().min(100).max(1_000_000).default(20_000),
  /** Reconnects with Last-Event-ID per user per minute, counted in Redis across instances (429 once spent); 0: unlimited. */
  ORDER_EVENTS_REPLAYS_PER_MINUTE: z.coerce.number().int().min(0).max(100_000).default(30),
  /** The OMS's capped stream of price changes: live quotes (GET /v1/market/events) are read from it. */
  MARKET_TICKS_STREAM: z.string().min(1).default('trading:market:ticks'),
  /** A live quote stream's heartbeat. */
  MARKET_EVENTS_HEARTBEAT_MS: z.coerce.number().int().min(50).max(60_000).default(15_000),
  /** Open live quote streams per user, over every facade instance (counted in Redis). */
  MARKET_EVENTS_MAX_STREAMS_PER_USER: z.coerce.number().int().positive().default(5),
  /**
   * How long an open stream's slot outlives a facade instance that died without giving it back
   * (each instance renews its streams' slots every third of this): the longest a crash can keep
   * a user from opening streams.
   */
  EVENT_STREAM_LEASE_MS: z.coerce.number().int().min(1000).max(300_000).default(15_000),
  /**
   * How long the registered web origins (CORS) read from auth are kept: a suspended app's page
   * may call the API this much longer; auth is asked once per this interval per instance.
   */
  CORS_ORIGINS_CACHE_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /** Proxies (load balancers) whose X-Forwarded-For is believed; Express `trust proxy` values. */
  FACADE_TRUST_PROXY: field.list(),
  /**
   * A DEV client id the API docs' Authorize dialog (Swagger UI at /docs) starts with, for the
   * authorization code flow with PKCE; its redirect URIs must include `<facade>/docs/assets/oauth2-redirect.html`.
   * The all-in-one sets its demo app's. Unset: the dialog asks for one.
   */
  DOCS_OAUTH_CLIENT_ID: z
    .string()
    .regex(/^tci_dev_/, 'must be a DEV client id (tci_dev_…)')
    .optional(),
});

export type FacadeConfig = z.output<typeof facadeConfigSchema>;

export const loadFacadeConfig = (env: NodeJS.ProcessEnv = process.env): FacadeConfig => loadConfig('rest-facade', facadeConfigSchema, env);
