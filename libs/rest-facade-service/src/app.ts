import { ACCESS_TOKEN_AUDIENCE, createAccessTokenVerifier, EdgeAuthenticator, InternalClaimsSigner, SessionStore } from '@trading/auth';
import { connectEventLog, type EventLog } from '@trading/events';
import { configureProblemTypes, problemTypeUrl } from '@trading/errors';
import { createLogger, type Logger } from '@trading/logging';
import { cachedReadMetrics, connectEdgeStore, type KeyValueStore } from '@trading/redis';
import { ApiLimits, HeldSlots, OAuthAddressBudget, rateLimitRefusals, RequestLimiter } from '@trading/rate-limit';
import {
  createService,
  finishService,
  Lifecycle,
  PAGE_STYLESHEET_PATH,
  servePageStyles,
  type GraphQLEndpoint,
  type ServiceApp,
  type ServiceListeners,
} from '@trading/service';
import type { Express, Router } from 'express';
import type { FacadeConfig } from './config';
import { corsForRegisteredOrigins } from './cors/cors';
import { RegisteredOrigins } from './cors/registered-origins';
import { authenticate, publicRequest } from './edge/authenticate';
import { GatewayClient } from './edge/gateway-client';
import { readBodyFirst, routeTableRouter } from './edge/route-handler';
import { AUTHENTICATED_AUTH_ROUTES, authConnections, authProxy } from './proxy/auth-proxy';
import type { InProcessApp } from './proxy/forward';
import { optionsAnswer, queryGuard, routeGuard } from './edge/route-guard';
import { openApiDocument } from './openapi/openapi';
import { queryParametersOf } from './openapi/query-parameters';
import { apiIndexRouter } from './openapi/api-index';
import { docsRouter } from './openapi/docs';
export { DOCS_OAUTH_REDIRECT_PATH } from './openapi/docs';
import { LiveQuoteFeed } from './market-events/live-quotes';
import { MARKET_EVENTS_PATH, marketEventsRoute } from './market-events/market-events.route';
import { LiveOrderFeed } from './order-events/live-feed';
import { ORDER_EVENTS_PATH, orderEventsRoute } from './order-events/order-events.route';
import { ROUTES } from './routes';

export { loadFacadeConfig, oauthLimitSchema, type FacadeConfig } from './config';
export { openApiDocument } from './openapi/openapi';
/** Checks webhook bodies against the AsyncAPI document's messages (tests and tools; loads ajv, a development dependency). */
export { asyncApiMessageValidator } from './asyncapi/message-validator';
/** The route table: what the facade serves and the scopes each route needs (tests pin the whole map). */
export { ROUTES } from './routes';
/** Auth's routes the facade authenticates and passes on (beside the route table). */
export { AUTHENTICATED_AUTH_ROUTES } from './proxy/auth-proxy';
/** The REST contract's zod schemas (what the document is made from), for tests and tools. */
export * as restContract from './contract';

const BASE_PATH = '/v1';

/** What the event streams are served from: the feeds read once per instance, and the edge's own clients. */
interface EventStreamDeps {
  store: KeyValueStore;
  metrics: ServiceListeners['metrics'];
  feed: LiveOrderFeed;
  quotes: LiveQuoteFeed;
  edge: EdgeAuthenticator;
  gateway: GatewayClient;
}

export interface FacadeDeps {
  logger?: Logger;
  store?: KeyValueStore;
  /** The settlement stream's log (the all-in-one launcher passes its own). */
  events?: EventLog;
  /** The gateway's GraphQL when it runs in this process (the all-in-one), called instead of its listener. */
  gateway?: () => GraphQLEndpoint | undefined;
  /** Auth's internal listener's app when it runs in this process (the all-in-one), handed `/oauth/*` and `/pat/*` instead of a socket. */
  auth?: () => InProcessApp | undefined;
}

export async function createRestFacadeApp(config: FacadeConfig, deps: FacadeDeps = {}): Promise<ServiceApp> {
  const logger = deps.logger ?? createLogger('rest-facade', config.LOG_LEVEL);
  // Problem `type` URLs name auth's pages (/problems/<code>); /v1/problems/<code> here leads there too.
  configureProblemTypes(config.AUTH_ISSUER);
  // Closed in reverse on close(), or at once if a later step fails.
  const life = Lifecycle.of('rest-facade', logger);
  return life.build(async () => {
    const store = deps.store ?? life.own('redis store', await connectEdgeStore(config), (s) => s.close());
    const events = deps.events ?? life.own('event log', await connectEventLog(config), (e) => e.close());
    const feed = life.own('live order feed', new LiveOrderFeed(events, config.EVENTS_STREAM, config.SERVICE_TRUSTED_KEYS, logger), (f) =>
      f.close(),
    );
    const quotes = life.own('live quote feed', new LiveQuoteFeed(events, config.MARKET_TICKS_STREAM, logger), (f) => f.close());
    const edge = new EdgeAuthenticator(
      createAccessTokenVerifier({ jwksUrl: config.AUTH_JWKS_URL, issuer: config.AUTH_ISSUER, audience: ACCESS_TOKEN_AUDIENCE }),
      new SessionStore(store),
    );
    const signer = new InternalClaimsSigner(config.SERVICE_KEY);
    const gateway = life.own('gateway client', new GatewayClient(config.GATEWAY_URL, signer, deps.gateway), (g) => g.close());

    const { app, internal, metrics } = createService({
      name: 'rest-facade',
      logger,
      trustProxy: config.FACADE_TRUST_PROXY,
      readiness: { redis: () => store.ping() },
    });
    mountCors(app, config, signer, logger);
    // Auth's own endpoints first (/pat/login and /oauth/* unauthenticated here, the auth app
    // decides; /pat/revoke and /pat/login-activity authenticated here and proxied with signed
    // claims), then everything else under /v1 is an authenticated API call from the route table.
    mountDocs(app, config);
    const limits = new ApiLimits(store, config, metrics);
    cachedReadMetrics(metrics, store);
    // Per client address for everything but /oauth/*, which auth budgets per vendor app (one backend refreshes for many users).
    const byAddress = limits.byAddress();
    app.use(BASE_PATH, (req, res, next) => (req.path.startsWith('/oauth/') ? next() : byAddress(req, res, next)));
    const oauthBudget = new OAuthAddressBudget(store, config.API_RATE_LIMIT_NAMESPACE, config.OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE, metrics);
    // DPoP proofs name the public URL of the request: the configured {base_url} and the path under /v1.
    const publicRequestOf = publicRequest(config.FACADE_PUBLIC_URL);
    const connections = life.own('connections to auth', authConnections(config.AUTH_INTERNAL_URL, deps.auth), (a) => a.close());
    const known = [
      ...ROUTES,
      ...AUTHENTICATED_AUTH_ROUTES,
      { method: 'GET', path: ORDER_EVENTS_PATH },
      { method: 'GET', path: MARKET_EVENTS_PATH },
    ];
    // Query parameters an operation does not take, and OPTIONS, are answered here for every
    // path the API has, auth's included (its pass-through comes next).
    app.use(
      BASE_PATH,
      queryGuard(known, queryParametersOf(openApiDocument)),
      optionsAnswer(known, authenticate(edge, limits, publicRequestOf)),
      readBodyFirst(),
    );
    app.use(BASE_PATH, authProxy({ publicRequest: publicRequestOf, connections }, edge, signer, limits, oauthBudget));
    app.use(
      BASE_PATH,
      routeGuard(known),
      authenticate(edge, limits, publicRequestOf),
      ...eventStreamRoutes(config, { store, metrics, feed, quotes, edge, gateway }),
      routeTableRouter(ROUTES, gateway, limits),
    );
    // A person who opens an API address in a browser gets a page saying what went wrong and where to read on; programs keep problem+json.
    finishService(app, logger, { problemPages: { docs: '/docs', index: BASE_PATH } });
    finishService(internal, logger);

    return {
      name: 'rest-facade',
      app,
      internal,
      close: () => life.close(),
    };
  });
}

/**
 * CORS for vendor apps' registered web origins, before any budget or token check: a preflight
 * carries no token and is answered from memory (origins read from auth now and then).
 */
function mountCors(app: Express, config: FacadeConfig, signer: InternalClaimsSigner, logger: Logger): void {
  const origins = new RegisteredOrigins(config.AUTH_INTERNAL_URL, signer, config.CORS_ORIGINS_CACHE_MS, logger);
  const methods = [...new Set(['GET', ...ROUTES.map((r) => r.method.toUpperCase())])];
  app.use(
    BASE_PATH,
    corsForRegisteredOrigins((origin) => origins.has(origin), methods),
  );
}

/** The documentation, the API index, the pages' stylesheet and the problem types' addresses: public, no token. */
function mountDocs(app: Express, config: FacadeConfig): void {
  app.use(docsRouter(BASE_PATH, { publicUrl: config.FACADE_PUBLIC_URL[0]!, oauthClientId: config.DOCS_OAUTH_CLIENT_ID }));
  app.use(apiIndexRouter(BASE_PATH, config.FACADE_PUBLIC_URL[0]!));
  app.get(PAGE_STYLESHEET_PATH, servePageStyles);
  app.get(`${BASE_PATH}/problems/:code`, (req, res) => res.redirect(302, problemTypeUrl(req.params['code'])));
}

/** The order and market event streams (Server-Sent Events), each with its open streams per user counted over every instance. */
function eventStreamRoutes(config: FacadeConfig, { store, metrics, feed, quotes, edge, gateway }: EventStreamDeps): Router[] {
  // Open event streams per user, counted in Redis over every instance (leases this instance renews while a stream lives).
  const streamSlots = (name: string, max: number) =>
    new HeldSlots(store, config.API_RATE_LIMIT_NAMESPACE, { name, max, leaseMs: config.EVENT_STREAM_LEASE_MS });
  return [
    orderEventsRoute(feed, edge, gateway, {
      heartbeatMs: config.ORDER_EVENTS_HEARTBEAT_MS,
      slots: streamSlots('order-streams', config.ORDER_EVENTS_MAX_STREAMS_PER_USER),
      replayMaxEntries: config.ORDER_EVENTS_REPLAY_MAX_ENTRIES,
      replays: new RequestLimiter(store, config.API_RATE_LIMIT_NAMESPACE, {
        name: 'event-replays',
        perMinute: config.ORDER_EVENTS_REPLAYS_PER_MINUTE,
      }),
      refusals: rateLimitRefusals(metrics, ['event-replays']),
    }),
    marketEventsRoute(quotes, edge, gateway, {
      heartbeatMs: config.MARKET_EVENTS_HEARTBEAT_MS,
      slots: streamSlots('quote-streams', config.MARKET_EVENTS_MAX_STREAMS_PER_USER),
    }),
  ];
}
