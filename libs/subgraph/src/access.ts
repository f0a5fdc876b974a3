/**
 * Who may call which field of a subgraph (its scope rules, and READ_ONLY sessions running queries
 * only), and whether the caller owns an account, for the subgraphs that extend Account.
 */
import type { buildSubgraphSchema } from '@apollo/subgraph';
import { defaultFieldResolver, type GraphQLFieldResolver, type GraphQLScalarType } from 'graphql';
import { ExpiringCache, missingScopes, reachesAccount, type Claims } from '@trading/auth';
import { AppError, errors } from '@trading/errors';
import type { Logger } from '@trading/logging';

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
 * opened account is asked about again at once (a miss is never cached as an answer). What is
 * remembered is the user's, not the token's: an account the token was not given is refused first.
 */
export async function callerOwnsAccount(
  ctx: SubgraphContext,
  accountId: string,
  ownedAccountIds: (claims: Claims, requestId: string) => Promise<readonly string[]>,
): Promise<boolean> {
  if (!reachesAccount(ctx.claims, accountId)) return false;
  const ask = () => {
    const asked = ownedAccountIds(ctx.claims, ctx.requestId).then((ids) => new Set(ids));
    ownedAccounts.set(ctx.claims.sub, asked, Date.now() + OWNED_ACCOUNTS_SECONDS * 1000);
    // Stryker disable next-line ArrowFunction: a failed lookup in the cache already reads as unknown (below), so dropping it only frees the entry sooner
    asked.catch(() => ownedAccounts.set(ctx.claims.sub, asked, 0)); // a failure is not remembered
    return asked;
  };
  const cached = ownedAccounts.get(ctx.claims.sub);
  if (cached && (await cached.catch(() => undefined))?.has(accountId)) return true;
  // Not known to be the caller's: ask (once per request) before saying no.
  // Stryker disable next-line StringLiteral: the memo key only has to differ from the subgraph's other per-request names
  const owned = await perRequest(ctx, 'owned-accounts', ask);
  return owned.has(accountId);
}

/** What `buildSubgraphSchema` takes (Apollo's GraphQLResolverMap, written out here: the package exports it only from its dist/ folder). */
export interface GraphQLResolverMap {
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

/** Wraps each field named in the rules so it checks the caller's scopes before resolving. */
export function enforceScopes(resolvers: GraphQLResolverMap, rules: ScopeRules): GraphQLResolverMap {
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

/** Deny by default: a Query or Mutation field without a scope rule stops the subgraph from starting. */
export function assertEveryRootFieldHasAScopeRule(schema: ReturnType<typeof buildSubgraphSchema>, rules: ScopeRules): void {
  for (const root of [schema.getQueryType(), schema.getMutationType()]) {
    if (!root) continue;
    for (const field of Object.keys(root.getFields())) {
      if (field.startsWith('_')) continue; // federation's _entities/_service
      if (!rules[`${root.name}.${field}`]) throw new Error(`${root.name}.${field} has no scope rule`);
    }
  }
}
