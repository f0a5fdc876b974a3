import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { Express } from 'express';
import { GraphQLError, parse } from 'graphql';
import {
  deriveServiceSecret,
  INTERNAL_CLAIMS_HEADER,
  InternalClaimsSigner,
  InternalClaimsVerifier,
  type ServiceKey,
  type ServiceName,
  type TrustedServiceKeys,
} from '@trading/auth';
import { graphqlLimits, SUBGRAPH_GRAPHQL_LIMITS } from '@trading/graphql-limits';
import { databasePoolMetrics, openDatabase, pingDatabase, type DatabaseOptions, type DataSource } from '@trading/db';
import type { Logger } from '@trading/logging';
import type { Registry } from 'prom-client';
import { createService, finishService, graphqlEndpoint, type GraphQLEndpoint, type ServiceApp } from '@trading/service';
import { assertEveryRootFieldHasAScopeRule, enforceScopes, type GraphQLResolverMap, type ScopeRules, type SubgraphContext } from './access';
import { formatSubgraphError } from './errors';

// Who may call which field, and account ownership: see ./access.
export { anyOf, callerOwnsAccount, perRequest, type AccountReference, type ScopeRules, type SubgraphContext } from './access';
export { internalApi, jsonBody } from './internal-api';
export { SCALARS_SDL, scalarResolvers } from './scalars';

/**
 * A subgraph's resolvers by type and field. Each subgraph types its own with the `Resolvers`
 * generated from its SDL (`npm run graphql-types`), so a resolver the SDL does not declare is a
 * type error there; here they are only merged and handed to Apollo.
 */
export type ResolverMap = { readonly [typeName: string]: object | undefined };

export interface SubgraphOptions {
  name: string;
  /** SDL documents: the subgraph's federation header plus one per feature. */
  typeDefs: string[];
  resolvers: readonly ResolverMap[];
  scopes: ScopeRules;
  verifier: InternalClaimsVerifier;
  logger: Logger;
}

/**
 * Builds a federation subgraph as one GraphQL endpoint (served at POST /graphql). Every request must
 * carry a valid internal claims header; every root field must have a scope rule (deny by
 * default: a field without one stops start-up); READ_ONLY PAT sessions may not run mutations.
 */
export async function createSubgraph(options: SubgraphOptions): Promise<{ endpoint: GraphQLEndpoint; stop(): Promise<void> }> {
  const typeDefs = parse(options.typeDefs.join('\n'));
  const merged = mergeResolvers(options.resolvers);
  const schema = buildSubgraphSchema([{ typeDefs, resolvers: enforceScopes(merged, options.scopes) }]);
  assertEveryRootFieldHasAScopeRule(schema, options.scopes);

  const limits = graphqlLimits(SUBGRAPH_GRAPHQL_LIMITS, { suggestions: false });
  const server = new ApolloServer<SubgraphContext>({
    schema,
    // No cache hints are used: Apollo's default cache-control plugin would only wrap every field's resolver.
    plugins: [ApolloServerPluginInlineTraceDisabled(), ApolloServerPluginCacheControlDisabled(), ...limits.plugins],
    validationRules: limits.validationRules,
    parseOptions: limits.parseOptions,
    // Only the gateway (a static supergraph) and sibling services call a subgraph: none needs introspection or hints.
    introspection: false,
    hideSchemaDetailsFromClientErrors: true,
    stopOnTerminationSignals: false, // the app's runService owns shutdown
    includeStacktraceInErrorResponses: false,
    formatError: (formatted, error) => formatSubgraphError(formatted, error, options.logger),
  });
  await server.start();

  const endpoint = graphqlEndpoint(server, async (call) => {
    const header = call.headers[INTERNAL_CLAIMS_HEADER];
    const claims = await options.verifier.verify(typeof header === 'string' ? header : undefined);
    if (!claims) {
      throw new GraphQLError('Missing or invalid internal claims', { extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } } });
    }
    return { claims, requestId: call.requestId, logger: options.logger, memo: new Map() };
  });
  return { endpoint, stop: () => server.stop() };
}

function mergeResolvers(list: readonly ResolverMap[]): GraphQLResolverMap {
  const merged: GraphQLResolverMap = {};
  for (const resolvers of list) {
    for (const [type, fields] of Object.entries(resolvers)) {
      merged[type] = { ...(merged[type] as object), ...(fields as object) } as GraphQLResolverMap[string];
    }
  }
  return merged;
}

/** The largest request body a subgraph reads: an `_entities` batch of every account a page holds fits many times over. */
const SUBGRAPH_BODY_LIMIT_BYTES = 1024 * 1024;

/** Every subgraph's SDL starts with this header (Federation 2). */
export const FEDERATION_HEADER = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key", "@shareable", "@external", "@requires", "@inaccessible"])
`;

/** A service's identity: its own key (to sign calls and derive secrets) and the peers' public keys. */
export interface ServiceIdentity {
  SERVICE_KEY: ServiceKey;
  SERVICE_TRUSTED_KEYS: TrustedServiceKeys;
}

export interface SubgraphServiceOptions {
  name: ServiceName;
  logger: Logger;
  databaseUrl: string;
  /** Settings every database session starts with (see openDatabase's `settings`). */
  databaseSettings?: Record<string, string>;
  /** A statement running longer is cancelled (DB_STATEMENT_TIMEOUT_MS); unset: DATABASE_SESSION_LIMITS'. */
  statementTimeoutMs?: number;
  identity: ServiceIdentity;
  entities: DatabaseOptions['entities'];
  migrations: DatabaseOptions['migrations'];
  typeDefs: string[];
  scopes: ScopeRules;
  /** Builds the resolvers once the database is open. */
  resolvers(dataSource: DataSource): readonly ResolverMap[];
  /** Optional plain HTTP routes beside `/graphql` on the internal listener (mounted before the 404 and error handlers). */
  routes?(internal: Express, dataSource: DataSource): void;
}

export interface SubgraphService extends ServiceApp {
  dataSource: DataSource;
  /** Its GraphQL, for the gateway and peers of the same process (the all-in-one): the same checks as over HTTP. */
  graphql: GraphQLEndpoint;
  /** The service's Prometheus registry (served on the internal listener's /metrics). */
  metrics: Registry;
}

/** How a service signs its own calls to its peers, and the key its cursors are signed with. */
export function identityTools(identity: ServiceIdentity) {
  return {
    signer: new InternalClaimsSigner(identity.SERVICE_KEY),
    cursorKey: deriveServiceSecret(identity.SERVICE_KEY, 'cursors'),
  };
}

/**
 * The whole of a subgraph app: open its database (migrations run), build its schema with
 * scope rules, and serve it with health, readiness and metrics. Every subgraph is this shape.
 */
export async function createSubgraphService(options: SubgraphServiceOptions): Promise<SubgraphService> {
  const dataSource = await openDatabase({
    url: options.databaseUrl,
    entities: options.entities,
    migrations: options.migrations,
    settings: options.databaseSettings,
    limits: options.statementTimeoutMs === undefined ? undefined : { statementTimeoutMs: options.statementTimeoutMs },
  });
  try {
    const subgraph = await createSubgraph({
      name: options.name,
      typeDefs: options.typeDefs,
      resolvers: options.resolvers(dataSource),
      scopes: options.scopes,
      verifier: new InternalClaimsVerifier(options.name, options.identity.SERVICE_TRUSTED_KEYS),
      logger: options.logger,
    });
    // The public listener has health and readiness only: GraphQL and internal APIs are for the platform's own services.
    const { app, internal, metrics, serveInternalGraphQL } = createService({
      name: options.name,
      logger: options.logger,
      readiness: { database: () => pingDatabase(dataSource) },
    });
    databasePoolMetrics(metrics, dataSource);
    serveInternalGraphQL(subgraph.endpoint, { limitBytes: SUBGRAPH_BODY_LIMIT_BYTES });
    options.routes?.(internal, dataSource);
    finishService(app, options.logger);
    finishService(internal, options.logger);
    return {
      name: options.name,
      app,
      internal,
      dataSource,
      metrics,
      graphql: subgraph.endpoint,
      close: async () => {
        await subgraph.stop();
        await dataSource.destroy();
      },
    };
  } catch (err) {
    await dataSource.destroy();
    throw err;
  }
}
