import {
  generateServiceKey,
  INTERNAL_CLAIMS_HEADER,
  InternalClaimsSigner,
  InternalClaimsVerifier,
  TrustedServiceKeys,
  type Claims,
} from '@trading/auth';
import { createLogger } from '@trading/logging';
import type { GraphQLEndpoint } from '@trading/service';
import {
  anyOf,
  callerOwnsAccount,
  createSubgraph,
  FEDERATION_HEADER,
  perRequest,
  type ResolverMap,
  type ScopeRules,
  type SubgraphContext,
} from './index';

const logger = createLogger('access-test', 'silent');
const gatewayKey = generateServiceKey('gateway');
const signer = new InternalClaimsSigner(gatewayKey);
const verifier = new InternalClaimsVerifier('accounts', TrustedServiceKeys.of(gatewayKey));

const typeDefs = [
  FEDERATION_HEADER,
  /* GraphQL */ `
    type Query { both: String! either: String! thing: Thing! echo(text: String!): String! }
    type Mutation { change: String! }
    type Thing @key(fields: "id") { id: ID! label: String! hidden: String shout: String! }
  `,
];
const resolvers: ResolverMap = {
  Query: {
    both: () => 'both',
    either: () => 'either',
    thing: () => ({ id: 't1', label: 'plain' }),
    echo: (_: unknown, args: { text: string }) => args.text,
  },
  Mutation: { change: () => 'changed' },
  // `label` has no resolver of its own: its rule wraps the default one. `shout` has no rule.
  Thing: { hidden: () => 'secret', shout: (thing: { label: string }) => thing.label.toUpperCase() },
};
const scopes: ScopeRules = {
  'Query.both': ['read:accounts', 'read:banking'],
  'Query.either': anyOf('read:accounts', 'read:banking'),
  'Query.thing': ['read:accounts'],
  'Query.echo': ['read:accounts'],
  'Mutation.change': ['write:accounts'],
  'Thing.label': ['read:accounts'],
  'Thing.hidden': ['read:orders'],
};

const build = (typeDefsOf: string[], rules: ScopeRules, resolverMap: ResolverMap = resolvers) =>
  createSubgraph({ name: 'access-test', typeDefs: typeDefsOf, resolvers: [resolverMap], scopes: rules, verifier, logger });

describe('scope rules on a subgraph', () => {
  let endpoint: GraphQLEndpoint;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    ({ endpoint, stop } = await build(typeDefs, scopes));
  });
  // Only when it was built: a subgraph that failed to build fails each test instead.
  afterAll(() => stop?.());

  /** Runs an operation as the gateway would send it, with signed internal claims. */
  const run = async (query: string, claims: Partial<Claims>) => {
    const header = await signer.sign({ sub: 'u', sid: 's', kind: 'pat', scope: [], ...claims }, 'accounts');
    const reply = await endpoint({ headers: { [INTERNAL_CLAIMS_HEADER]: header }, body: { query }, requestId: 'r' });
    return JSON.parse(reply.body) as {
      data?: Record<string, unknown> | null;
      errors?: { message: string; path?: unknown[]; extensions: Record<string, unknown> }[];
    };
  };

  it('needs every scope a rule lists', async () => {
    expect((await run('{ both }', { scope: ['read:accounts', 'read:banking'] })).data).toEqual({ both: 'both' });
    for (const scope of [['read:accounts'], ['read:banking'], []]) {
      const denied = await run('{ both }', { scope });
      expect(denied.data).toBeNull();
      expect(denied.errors).toEqual([
        expect.objectContaining({
          message: 'This operation needs scope read:accounts read:banking',
          extensions: expect.objectContaining({ code: 'INSUFFICIENT_SCOPE', requiredScopes: ['read:accounts', 'read:banking'] }),
        }),
      ]);
    }
  });

  it('meets an anyOf rule with any one of its scopes, and names them all when none is held', async () => {
    expect((await run('{ either }', { scope: ['read:accounts'] })).data).toEqual({ either: 'either' });
    expect((await run('{ either }', { scope: ['read:banking'] })).data).toEqual({ either: 'either' });
    const denied = await run('{ either }', { scope: ['read:market'] });
    expect(denied.data).toBeNull();
    expect(denied.errors).toEqual([
      expect.objectContaining({
        message: 'This operation needs scope read:accounts read:banking',
        extensions: expect.objectContaining({ code: 'INSUFFICIENT_SCOPE', requiredScopes: ['read:accounts', 'read:banking'] }),
      }),
    ]);
  });

  it('refuses a mutation from a READ_ONLY session before looking at its scopes', async () => {
    for (const scope of [['write:accounts'], []]) {
      const refused = await run('mutation { change }', { scope, access: 'READ_ONLY' });
      expect(refused.data).toBeNull();
      expect(refused.errors).toEqual([
        expect.objectContaining({
          message: 'A READ_ONLY token may run queries only',
          extensions: expect.objectContaining({ code: 'READ_ONLY_TOKEN' }),
        }),
      ]);
    }
    // Other sessions are held to the mutation's scopes only.
    expect((await run('mutation { change }', { scope: ['write:accounts'], access: 'READ_WRITE' })).data).toEqual({ change: 'changed' });
    expect((await run('mutation { change }', { scope: ['write:accounts'], kind: 'oauth' })).data).toEqual({ change: 'changed' });
    const unscoped = await run('mutation { change }', { scope: ['read:accounts'], access: 'READ_WRITE' });
    expect(unscoped.errors?.[0]?.extensions).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScopes: ['write:accounts'] });
  });

  it('lets a READ_ONLY session run queries its scopes allow', async () => {
    expect((await run('{ echo(text: "hi") }', { scope: ['read:accounts'], access: 'READ_ONLY' })).data).toEqual({ echo: 'hi' });
  });

  it('applies a rule on a field of a non-root type, resolving a field without a resolver the default way', async () => {
    const partial = await run('{ thing { id label shout hidden } }', { scope: ['read:accounts'] });
    expect(partial.data).toEqual({ thing: { id: 't1', label: 'plain', shout: 'PLAIN', hidden: null } });
    expect(partial.errors).toEqual([
      expect.objectContaining({
        path: ['thing', 'hidden'],
        extensions: expect.objectContaining({ code: 'INSUFFICIENT_SCOPE', requiredScopes: ['read:orders'] }),
      }),
    ]);
    const full = await run('{ thing { label hidden } }', { scope: ['read:accounts', 'read:orders'] });
    expect(full).toEqual({ data: { thing: { label: 'plain', hidden: 'secret' } } });
  });

  it("serves federation's _entities and _service without a rule of their own", async () => {
    const entities = await run(
      '{ _entities(representations: [{ __typename: "Thing", id: "t9", label: "ref" }]) { ... on Thing { id label } } }',
      {
        scope: ['read:accounts'],
      },
    );
    expect(entities).toEqual({ data: { _entities: [{ id: 't9', label: 'ref' }] } });
    const service = await run('{ _service { sdl } }', { scope: [] });
    expect(service.errors).toBeUndefined();
    expect(service.data?.['_service']).toEqual({ sdl: expect.stringContaining('type Thing') });
  });
});

describe('a subgraph whose root fields lack scope rules', () => {
  it('will not build while a Query field has none', async () => {
    const { 'Query.echo': _echo, ...rules } = scopes;
    await expect(build(typeDefs, rules)).rejects.toThrow(/^Query\.echo has no scope rule$/);
  });

  it('will not build while a Mutation field has none', async () => {
    const { 'Mutation.change': _change, ...rules } = scopes;
    await expect(build(typeDefs, rules)).rejects.toThrow(/^Mutation\.change has no scope rule$/);
  });

  it('builds without a Mutation type', async () => {
    const { stop } = await build(
      [FEDERATION_HEADER, 'type Query { echo(text: String!): String! }'],
      { 'Query.echo': ['read:accounts'] },
      { Query: resolvers['Query'] },
    );
    await stop();
  });
});

const contextFor = (sub: string, requestId = `req-${sub}`): SubgraphContext => ({
  claims: { sub, sid: 's', kind: 'oauth', scope: [] },
  requestId,
  logger,
  memo: new Map(),
});

describe('perRequest', () => {
  it('makes one instance per name and request', () => {
    let made = 0;
    const make = () => ({ n: ++made });
    const ctx = contextFor('memo-user');
    const first = perRequest(ctx, 'loader', make);
    expect(first).toEqual({ n: 1 });
    expect(perRequest(ctx, 'loader', make)).toBe(first);
    expect(perRequest(ctx, 'other', make)).toEqual({ n: 2 });
    expect(perRequest(contextFor('memo-user'), 'loader', make)).toEqual({ n: 3 });
    expect(made).toBe(3);
  });
});

describe('callerOwnsAccount', () => {
  let users = 0;
  /** Each test its own user: the owned-accounts cache lives as long as the module. */
  const newUser = () => `owner-${++users}`;

  /** The accounts lookup as the accounts subgraph answers it: each call takes the next answer (or repeats the last). */
  const accountsLookup = (...answers: (readonly string[] | Error | Promise<readonly string[]>)[]) => {
    const calls: [string, string][] = [];
    const lookup = async (claims: Claims, requestId: string) => {
      calls.push([claims.sub, requestId]);
      const answer = answers[Math.min(calls.length, answers.length) - 1]!;
      if (answer instanceof Error) throw answer;
      return answer;
    };
    return { lookup, calls };
  };

  afterEach(() => jest.restoreAllMocks());

  it('asks once per request, however many accounts it is asked about, with the caller and request id', async () => {
    const user = newUser();
    const { lookup, calls } = accountsLookup(['A']);
    const ctx = contextFor(user, 'req-1');
    expect(await Promise.all(['A', 'B', 'C'].map((id) => callerOwnsAccount(ctx, id, lookup)))).toEqual([true, false, false]);
    expect(await callerOwnsAccount(ctx, 'D', lookup)).toBe(false);
    expect(calls).toEqual([[user, 'req-1']]);
  });

  it('answers for a known account from the cache for 10 s without asking, and asks again after', async () => {
    const user = newUser();
    const { lookup, calls } = accountsLookup(['A']);
    const now = jest.spyOn(Date, 'now').mockReturnValue(1_000_000);
    expect(await callerOwnsAccount(contextFor(user), 'A', lookup)).toBe(true);
    now.mockReturnValue(1_000_000 + 9_999);
    expect(await callerOwnsAccount(contextFor(user), 'A', lookup)).toBe(true);
    expect(calls).toHaveLength(1);
    now.mockReturnValue(1_000_000 + 10_000);
    expect(await callerOwnsAccount(contextFor(user), 'A', lookup)).toBe(true);
    expect(calls).toHaveLength(2);
  });

  it('asks again, once per request, about an account it does not know to be the caller’s', async () => {
    const user = newUser();
    const { lookup, calls } = accountsLookup(['A'], ['A', 'B']);
    expect(await callerOwnsAccount(contextFor(user), 'A', lookup)).toBe(true);
    // B was opened since: found at once.
    const second = contextFor(user, 'req-2');
    expect(await callerOwnsAccount(second, 'B', lookup)).toBe(true);
    expect(calls).toHaveLength(2);
    expect(await callerOwnsAccount(second, 'X', lookup)).toBe(false);
    expect(calls).toHaveLength(2);
    expect(await callerOwnsAccount(contextFor(user, 'req-3'), 'X', lookup)).toBe(false);
    expect(calls).toHaveLength(3);
  });

  it('refuses an account the token was not given, even one the cache knows to be the user’s, without asking', async () => {
    const user = newUser();
    const { lookup, calls } = accountsLookup(['a', 'b']);
    // A token for every account: the user's accounts are remembered, both of them.
    expect(await callerOwnsAccount(contextFor(user), 'b', lookup)).toBe(true);
    const limited: SubgraphContext = { ...contextFor(user, 'req-limited'), claims: { ...contextFor(user).claims, accounts: ['a'] } };
    expect(await callerOwnsAccount(limited, 'b', lookup)).toBe(false);
    expect(await callerOwnsAccount(limited, 'B', lookup)).toBe(false);
    expect(await callerOwnsAccount(limited, 'a', lookup)).toBe(true);
    expect(calls).toHaveLength(1);
    // Given no account at all, the token reaches none.
    const none: SubgraphContext = { ...contextFor(user, 'req-none'), claims: { ...contextFor(user).claims, accounts: [] } };
    expect(await callerOwnsAccount(none, 'a', lookup)).toBe(false);
  });

  it("does not answer for one user from another's accounts", async () => {
    const [owner, stranger] = [newUser(), newUser()];
    const { lookup, calls } = accountsLookup(['A'], []);
    expect(await callerOwnsAccount(contextFor(owner), 'A', lookup)).toBe(true);
    expect(await callerOwnsAccount(contextFor(stranger), 'A', lookup)).toBe(false);
    expect(calls.map(([sub]) => sub)).toEqual([owner, stranger]);
  });

  it('does not remember a failed lookup', async () => {
    const user = newUser();
    const { lookup, calls } = accountsLookup(new Error('accounts unavailable'), ['A']);
    const first = contextFor(user, 'req-1');
    await expect(callerOwnsAccount(first, 'A', lookup)).rejects.toThrow('accounts unavailable');
    // Within the request, the one lookup stands.
    await expect(callerOwnsAccount(first, 'A', lookup)).rejects.toThrow('accounts unavailable');
    expect(calls).toHaveLength(1);
    expect(await callerOwnsAccount(contextFor(user, 'req-2'), 'A', lookup)).toBe(true);
    expect(calls).toHaveLength(2);
  });

  it("asks for itself when another request's lookup it waited on fails", async () => {
    const user = newUser();
    let fail!: (err: Error) => void;
    const pending = new Promise<readonly string[]>((_, reject) => (fail = reject));
    pending.catch(() => undefined); // whoever asked sees the failure; the test need not
    const { lookup, calls } = accountsLookup(pending, ['A']);
    const both = Promise.allSettled([
      callerOwnsAccount(contextFor(user, 'req-1'), 'A', lookup),
      // Starts while the first request's lookup is still under way.
      callerOwnsAccount(contextFor(user, 'req-2'), 'A', lookup),
    ]);
    fail(new Error('accounts unavailable'));
    const [first, second] = await both;
    expect(first).toEqual({ status: 'rejected', reason: new Error('accounts unavailable') });
    expect(second).toEqual({ status: 'fulfilled', value: true });
    expect(calls.map(([, requestId]) => requestId)).toEqual(['req-1', 'req-2']);
  });
});
