import { generateServiceKey, InternalClaimsSigner, InternalClaimsVerifier, TrustedServiceKeys, type Claims } from '@trading/auth';
import { AppError } from '@trading/errors';
import { createLogger } from '@trading/logging';
import { createService, finishService, listen, type RunningServer } from '@trading/service';
import { http } from '@trading/testing';
import { createSubgraph, FEDERATION_HEADER, type ResolverMap } from './index';

const typeDefs = [
  FEDERATION_HEADER,
  /* GraphQL */ `
    type Query { secret: String! failing: String! broken: String! }
    type Mutation { change: String! }
  `,
];
const resolvers: ResolverMap = {
  Query: {
    secret: () => 'ok',
    failing: () => {
      throw new AppError('UNPROCESSABLE', 'amount has too many decimals', { field: 'amount' });
    },
    broken: () => {
      throw new Error('connect ECONNREFUSED 10.1.2.3:5432');
    },
  },
  Mutation: { change: () => 'changed' },
};
const scopes = {
  'Query.secret': ['read:accounts'],
  'Query.failing': ['read:accounts'],
  'Query.broken': ['read:accounts'],
  'Mutation.change': ['write:accounts'],
};

describe('createSubgraph', () => {
  const gatewayKey = generateServiceKey('gateway');
  const signer = new InternalClaimsSigner(gatewayKey);
  const verifier = new InternalClaimsVerifier('accounts', TrustedServiceKeys.of(gatewayKey));
  let server: RunningServer;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    const subgraph = await createSubgraph({
      name: 'test',
      typeDefs,
      resolvers: [resolvers],
      scopes,
      verifier,
      logger: createLogger('test', 'silent'),
    });
    stop = subgraph.stop;
    // Served as createSubgraphService serves it: POST /graphql on an internal listener.
    const { internal, serveInternalGraphQL } = createService({ name: 'test', logger: createLogger('test', 'silent') });
    serveInternalGraphQL(subgraph.endpoint, { limitBytes: 1024 * 1024 });
    finishService(internal, createLogger('test', 'silent'));
    server = await listen(internal, 0, '127.0.0.1');
  });
  // Only what was started: a subgraph that failed to build fails each test instead.
  afterAll(async () => {
    await server?.close();
    await stop?.();
  });

  const ask = async (query: string, claims?: Partial<Claims>) => {
    const headers: Record<string, string> = {};
    if (claims) headers['x-internal-claims'] = await signer.sign({ sub: 'u', sid: 's', kind: 'pat', scope: [], ...claims }, 'accounts');
    return http('POST', `${server.url}/graphql`, { body: { query }, headers });
  };

  it('refuses requests without signed claims', async () => {
    expect((await ask('{ secret }')).status).toBe(401);
  });

  it('checks the declared scopes of each field', async () => {
    expect((await ask('{ secret }', { scope: ['read:accounts'] })).body.data).toEqual({ secret: 'ok' });
    const denied = await ask('{ secret }', { scope: ['read:orders'] });
    expect(denied.body.errors[0].extensions).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScopes: ['read:accounts'] });
  });

  it('lets READ_ONLY sessions run queries only', async () => {
    const ro = await ask('mutation { change }', { scope: ['write:accounts'], access: 'READ_ONLY' });
    expect(ro.body.errors[0].extensions.code).toBe('READ_ONLY_TOKEN');
    const rw = await ask('mutation { change }', { scope: ['write:accounts'], access: 'READ_WRITE' });
    expect(rw.body.data).toEqual({ change: 'changed' });
  });

  it('keeps deliberate errors with their field and masks unexpected ones', async () => {
    const failing = await ask('{ failing }', { scope: ['read:accounts'] });
    expect(failing.body.errors[0]).toMatchObject({
      message: 'amount has too many decimals',
      extensions: { code: 'UNPROCESSABLE', field: 'amount' },
    });
    const broken = await ask('{ broken }', { scope: ['read:accounts'] });
    expect(broken.body.errors[0]).toMatchObject({ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } });
    expect(JSON.stringify(broken.body)).not.toContain('10.1.2.3');
  });

  it('will not start when a root field has no scope rule (deny by default)', async () => {
    await expect(
      createSubgraph({
        name: 't',
        typeDefs,
        resolvers: [resolvers],
        scopes: { 'Query.secret': ['read:accounts'] },
        verifier,
        logger: createLogger('t', 'silent'),
      }),
    ).rejects.toThrow(/has no scope rule/);
  });
});
