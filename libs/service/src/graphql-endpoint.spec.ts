import { ApolloServer } from '@apollo/server';
import express from 'express';
import { GraphQLError } from 'graphql';
import { createLogger } from '@trading/logging';
import { createService, finishService, graphqlEndpoint, listen, serveGraphQL, type GraphQLCall, type RunningServer } from './index';

/** A peer whose context admits only the header `x-internal-claims: trusted`, as a subgraph admits only verified claims. */
async function peer() {
  const server = new ApolloServer<{ caller: string; requestId: string }>({
    typeDefs: 'type Query { whoAmI: String! }',
    resolvers: {
      Query: { whoAmI: (_p: unknown, _a: unknown, ctx: { caller: string; requestId: string }) => `${ctx.caller}@${ctx.requestId}` },
    },
  });
  await server.start();
  const endpoint = graphqlEndpoint(server, async (call: GraphQLCall) => {
    if (call.headers['x-internal-claims'] !== 'trusted')
      throw new GraphQLError('Missing or invalid internal claims', { extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } } });
    return { caller: 'peer', requestId: call.requestId };
  });
  return { server, endpoint };
}

describe('graphqlEndpoint', () => {
  let stop: () => Promise<void>;
  let endpoint: Awaited<ReturnType<typeof peer>>['endpoint'];
  let running: RunningServer;

  beforeAll(async () => {
    const built = await peer();
    endpoint = built.endpoint;
    const logger = createLogger('svc', 'silent');
    const { internal } = createService({ name: 'svc', logger });
    internal.use('/graphql', express.json(), serveGraphQL(endpoint));
    finishService(internal, logger);
    running = await listen(internal, 0);
    stop = async () => {
      await running.close();
      await built.server.stop();
    };
  });
  afterAll(() => stop());

  const query = { query: '{ whoAmI }' };

  it('answers a call in process exactly as over HTTP: the same context, the same refusal', async () => {
    const inProcess = await endpoint({ headers: { 'x-internal-claims': 'trusted' }, body: query, requestId: 'r-1' });
    const overHttp = await fetch(`${running.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-internal-claims': 'trusted', 'x-request-id': 'r-1' },
      body: JSON.stringify(query),
    });
    expect([inProcess.status, JSON.parse(inProcess.body)]).toEqual([200, { data: { whoAmI: 'peer@r-1' } }]);
    expect([overHttp.status, await overHttp.json()]).toEqual([200, { data: { whoAmI: 'peer@r-1' } }]);
    expect(overHttp.headers.get('etag')).toBeNull(); // an answer nobody caches is not hashed

    // No claims, or forged ones, are refused in process as they are over HTTP: being in the same process grants nothing.
    for (const headers of [{}, { 'x-internal-claims': 'forged' }] as Array<Record<string, string>>) {
      const refused = await endpoint({ headers, body: query, requestId: 'r-2' });
      expect([refused.status, JSON.parse(refused.body).errors[0].extensions.code]).toEqual([401, 'UNAUTHENTICATED']);
      const overHttpRefused = await fetch(`${running.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(query),
      });
      expect([overHttpRefused.status, ((await overHttpRefused.json()) as any).errors[0].extensions.code]).toEqual([401, 'UNAUTHENTICATED']);
    }
  });

  it('serves POST only: another method falls through to the 404', async () => {
    const res = await fetch(`${running.url}/graphql?query=%7BwhoAmI%7D`, { headers: { 'x-internal-claims': 'trusted' } });
    expect(res.status).toBe(404);
  });
});
