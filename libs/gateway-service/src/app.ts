import { readFileSync } from 'node:fs';
import { ApolloGateway } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express, { type RequestHandler } from 'express';
import {
  ACCESS_TOKEN_AUDIENCE,
  createAccessTokenVerifier,
  EdgeAuthenticator,
  InternalClaimsSigner,
  InternalClaimsVerifier,
  SessionStore,
  type ServiceName,
} from '@trading/auth';
import { DEFAULT_GRAPHQL_LIMITS, graphqlLimits } from '@trading/graphql-limits';
import { configureProblemTypes } from '@trading/errors';
import { createLogger, type Logger } from '@trading/logging';
import { cachedReadMetrics, connectEdgeStore, type KeyValueStore } from '@trading/redis';
import { ApiLimits } from '@trading/rate-limit';
import { createService, finishService, graphqlEndpoint, Lifecycle, type GraphQLEndpoint, type ServiceApp } from '@trading/service';
import { explorerEnabled, type GatewayConfig } from './config';
import { explorerRouter } from './explorer/explorer';
import { internalGatewayContext, publicGatewayContext, type GatewayContext } from './context';
import { maskError } from './mask-errors';
import { operationMetrics } from './operation-metrics';
import { operationResolution } from './operation-resolution';
import { orderBudget } from './order-budget';
import { inProcess, SubgraphSource, subgraphConnections } from './subgraph-source';

export { explorerEnabled, loadGatewayConfig, type GatewayConfig } from './config';
type Subgraph = 'accounts' | 'banking' | 'oms';

export interface GatewayDeps {
  logger?: Logger;
  store?: KeyValueStore;
  /** Subgraphs running in this process (the all-in-one): called through their endpoints instead of their listeners. */
  subgraphs?: Partial<Record<Subgraph, () => GraphQLEndpoint | undefined>>;
}

export interface GatewayApp extends ServiceApp {
  /** The internal listener's GraphQL (claims signed for the gateway), for a facade of the same process. */
  graphql: GraphQLEndpoint;
}

export async function createGatewayApp(config: GatewayConfig, deps: GatewayDeps = {}): Promise<GatewayApp> {
  const logger = deps.logger ?? createLogger('gateway', config.LOG_LEVEL);
  // Problem `type` URLs name auth's pages (/problems/<code>).
  configureProblemTypes(config.AUTH_ISSUER);
  // Closed in reverse on close(), or at once if a later step fails.
  const life = Lifecycle.of('gateway', logger);
  return life.build(async () => {
    const store = deps.store ?? life.own('redis store', await connectEdgeStore(config), (s) => s.close());
    const subgraphUrls: Record<Subgraph, string> = { accounts: config.ACCOUNTS_URL, banking: config.BANKING_URL, oms: config.OMS_URL };

    const connections = life.own('subgraph connections', subgraphConnections(), (c) => c.close());
    const gateway = new ApolloGateway({
      supergraphSdl: readFileSync(config.SUPERGRAPH_PATH, 'utf8'),
      buildService: ({ name, url }) => {
        const local = deps.subgraphs?.[name as Subgraph];
        const transport = local ? inProcess(name as ServiceName, local) : connections.over(subgraphUrls[name as Subgraph] ?? url!);
        return new SubgraphSource(name as ServiceName, transport);
      },
    });
    // The app decides when to stop (runService or the platform); Apollo must not grab SIGTERM itself.
    // Aliases, root fields, depth and cost are bounded before a query is planned (one 1,000-alias query took 10 s).
    const operationLimits = graphqlLimits(DEFAULT_GRAPHQL_LIMITS, { suggestions: config.GRAPHQL_INTROSPECTION });
    const { app, internal, metrics, serveInternalGraphQL } = createService({
      name: 'gateway',
      logger,
      trustProxy: config.GATEWAY_TRUST_PROXY,
      readiness: { redis: () => store.ping() },
    });
    const server = new ApolloServer<GatewayContext>({
      gateway,
      // No cache hints anywhere: the default cache-control plugin would only cost a pass per request.
      // Automatic Persisted Queries stay on (front-ends save the text on every call): orderBudget charges
      // the parsed operation, so a hash-only request pays what its stored text would.
      // Apollo's landing page loads its sandbox from a CDN: off. A browser gets the bundled explorer instead (GATEWAY_EXPLORER).
      plugins: [
        ApolloServerPluginCacheControlDisabled(),
        ApolloServerPluginLandingPageDisabled(),
        ...operationLimits.plugins,
        operationMetrics(metrics),
        operationResolution(),
        orderBudget(),
      ],
      validationRules: operationLimits.validationRules,
      parseOptions: operationLimits.parseOptions,
      formatError: maskError,
      includeStacktraceInErrorResponses: false,
      stopOnTerminationSignals: false,
      // A map of the schema helps an attacker as much as a developer: only when asked for.
      introspection: config.GRAPHQL_INTROSPECTION,
      hideSchemaDetailsFromClientErrors: !config.GRAPHQL_INTROSPECTION,
    });
    await server.start();
    life.defer('apollo server', () => server.stop());

    const edge = new EdgeAuthenticator(
      createAccessTokenVerifier({ jwksUrl: config.AUTH_JWKS_URL, issuer: config.AUTH_ISSUER, audience: ACCESS_TOKEN_AUDIENCE }),
      new SessionStore(store),
    );
    const signer = new InternalClaimsSigner(config.SERVICE_KEY);
    const verifier = new InternalClaimsVerifier('gateway', config.SERVICE_TRUSTED_KEYS);

    // 64 KB holds any legitimate operation; a bigger body is refused before it is parsed.
    const bodyLimitBytes = 64 * 1024;
    const body = express.json({ limit: bodyLimitBytes });
    // The facade's calls arrive on the internal listener, already counted there.
    const limits = new ApiLimits(store, config, metrics);
    cachedReadMetrics(metrics, store);
    // A page and two files from memory, before the limits: no operation runs without a token anyway.
    if (explorerEnabled(config)) app.use(explorerRouter());
    app.use(
      '/graphql',
      limits.byAddress(),
      body,
      refuseBatches,
      expressMiddleware(server, { context: publicGatewayContext(edge, signer, limits, config.GATEWAY_PUBLIC_URL) }),
    );
    const internalGraphql = graphqlEndpoint(server, internalGatewayContext(verifier, signer));
    serveInternalGraphQL(internalGraphql, { limitBytes: bodyLimitBytes });
    finishService(app, logger);
    finishService(internal, logger);

    return {
      name: 'gateway',
      app,
      internal,
      graphql: internalGraphql,
      close: () => life.close(),
    };
  });
}

/**
 * A JSON array of operations (batching is off: one request, one budget check, one operation)
 * gets a clear 400 here; Apollo's own refusal would reach the caller masked as an internal error.
 */
const refuseBatches: RequestHandler = (req, res, next) => {
  if (!Array.isArray(req.body)) return next();
  res.status(400).json({
    errors: [
      { message: 'Batched requests are not supported: send one operation per request', extensions: { code: 'BATCHING_NOT_SUPPORTED' } },
    ],
  });
};
