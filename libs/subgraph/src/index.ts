import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { Express } from 'express';
import { defaultFieldResolver, GraphQLError, isObjectType, parse, type GraphQLFieldResolver, type GraphQLScalarType } from 'graphql';
import {
  deriveServiceSecret,
  ExpiringCache,
  INTERNAL_CLAIMS_HEADER,
  InternalClaimsSigner,
  InternalClaimsVerifier,
  missingScopes,
  type Claims,
  type ServiceKey,
  type ServiceName,
  type TrustedServiceKeys,
} from '@trading/auth';
import { graphqlLimits, SUBGRAPH_GRAPHQL_LIMITS } from '@trading/graphql-limits';
import { databasePoolMetrics, openDatabase, pingDatabase, type DatabaseOptions, type DataSource } from '@trading/db';
import { AppError, errors } from '@trading/errors';
import type { Logger } from '@trading/logging';
import type { Registry } from 'prom-client';
import { createService, finishService, graphqlEndpoint, type GraphQLEndpoint, type ServiceApp } from '@trading/service';

export interface SubgraphContext {
  claims: Claims;
  requestId: string;
  logger: Logger;
  /** Per-request memo (DataLoaders, lookups): see `perRequest`. */
  memo: Map<string, unknown>;
}

/**
 * One instance per request of something that batches or caches, e.g. a DataLoader for a list
 * field, so N parents cost one query, and nothing is shared between callers.
 */
export function perRequest<T>(ctx: SubgraphContext, name: string, make: () => T): T {
  if (!ctx.memo.has(name)) ctx.memo.set(name, make());
  return ctx.memo.get(name) as T;
}

/** An Account as a subgraph that extends it (banking, oms) sees it: only its key, the accounts subgraph owns the rest. */
export interface AccountReference {
  id: string;
}

/** Each user's accounts as the accounts subgraph last said, for a few seconds (accounts never change owner). */
const OWNED_ACCOUNTS_SECONDS = 10;
const ownedAccounts = new ExpiringCache<Promise<Set<string>>>();

/**
 * Whether the caller owns an account, for a subgraph that extends Account but does not own it
 * (banking, oms): the accounts subgraph is asked for all of the caller's accounts at most once
 * per request and once per OWNED_ACCOUNTS_SECONDS per user, so an `_entities` batch of any size
 * costs one call, and a representation of someone else's account resolves to null. A newly
 * opened account is asked about again at once (a miss is never cached as an answer).
 */
export async function callerOwnsAccount(
  ctx: SubgraphContext,
  accountId: string,
  ownedAccountIds: (claims: Claims, requestId: string) => Promise<readonly string[]>,
): Promise<boolean> {
  const ask = () => {
    const asked = ownedAccountIds(ctx.claims, ctx.requestId).then((ids) => new Set(ids));
    ownedAccounts.set(ctx.claims.sub, asked, Date.now() + OWNED_ACCOUNTS_SECONDS * 1000);
    asked.catch(() => ownedAccounts.set(ctx.claims.sub, asked, 0)); // a failure is not remembered
    return asked;
  };
  const cached = ownedAccounts.get(ctx.claims.sub);
  if (cached && (await cached.catch(() => undefined))?.has(accountId)) return true;
  // Not known to be the caller's: ask (once per request) before saying no.
  const owned = await perRequest(ctx, 'owned-accounts', ask);
  return owned.has(accountId);
}

export { internalApi, jsonBody } from './internal-api';
export { SCALARS_SDL, scalarResolvers } from './scalars';
import { formatSubgraphError } from './errors';

/**
 * A subgraph's resolvers by type and field. Each subgraph types its own with the `Resolvers`
 * generated from its SDL (`npm run graphql-types`), so a resolver the SDL does not declare is a
 * type error there; here they are only merged and handed to Apollo.
 */
export type ResolverMap = { readonly [typeName: string]: object | undefined };

/** What `buildSubgraphSchema` takes (Apollo's GraphQLResolverMap, written out here: the package exports it only from its dist/ folder). */
interface GraphQLResolverMap {
  [typeName: string]:
    | {
        [fieldName: string]:
          | GraphQLFieldResolver<any, SubgraphContext>
          | { requires?: string; resolve?: GraphQLFieldResolver<any, SubgraphContext> };
      }
    | GraphQLScalarType
    | { [enumValue: string]: string | number };
}

/** `'Query.accounts': ['read:accounts']`: the one declarative place where a subgraph states who may read what. */
export type ScopeRules = Record<string, readonly string[] | AnyOf>;

/** A rule met by any one of the scopes (e.g. finding one's own account serves every domain's reads). */
export interface AnyOf {
  anyOf: readonly string[];
}

export const anyOf = (...scopes: string[]): AnyOf => ({ anyOf: scopes });

function scopeRuleMet(granted: readonly string[], rule: readonly string[] | AnyOf): boolean {
  return 'anyOf' in rule ? rule.anyOf.some((s) => granted.includes(s)) : !missingScopes(granted, rule).length;
}

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

/** Wraps each field named in the rules so it checks the caller's scopes before resolving. */
function enforceScopes(resolvers: GraphQLResolverMap, rules: ScopeRules): GraphQLResolverMap {
  const wrapped: GraphQLResolverMap = { ...resolvers };
  for (const [coordinate, required] of Object.entries(rules)) {
    const [type, field] = coordinate.split('.') as [string, string];
    const fields = { ...((wrapped[type] as Record<string, unknown>) ?? {}) };
    const original = (fields[field] as GraphQLFieldResolver<unknown, SubgraphContext> | undefined) ?? defaultFieldResolver;
    fields[field] = (
      parent: unknown,
      args: Record<string, unknown>,
      ctx: SubgraphContext,
      info: Parameters<GraphQLFieldResolver<unknown, SubgraphContext>>[3],
    ) => {
      // The PAT method rule first: for a READ_ONLY token it is the real reason, not its scopes.
      if (type === 'Mutation' && ctx.claims.access === 'READ_ONLY') {
        throw new AppError('READ_ONLY_TOKEN', 'A READ_ONLY token may run queries only');
      }
      if (!scopeRuleMet(ctx.claims.scope, required))
        throw errors.insufficientScope('anyOf' in required ? [...required.anyOf] : [...required]);
      return original(parent, args, ctx, info);
    };
    wrapped[type] = fields as GraphQLResolverMap[string];
  }
  return wrapped;
}

function assertEveryRootFieldHasAScopeRule(schema: ReturnType<typeof buildSubgraphSchema>, rules: ScopeRules): void {
  for (const root of [schema.getQueryType(), schema.getMutationType()]) {
    if (!root || !isObjectType(root)) continue;
    for (const field of Object.keys(root.getFields())) {
      if (field.startsWith('_')) continue; // federation's _entities/_service
      if (!rules[`${root.name}.${field}`]) throw new Error(`${root.name}.${field} has no scope rule`);
    }
  }
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
