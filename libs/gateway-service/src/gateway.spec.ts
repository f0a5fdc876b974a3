import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import { createLogger } from '@trading/logging';
import { MemoryStore } from '@trading/redis';
import { listenService, type RunningService, type ServiceApp } from '@trading/service';
import { http, testKeys } from '@trading/testing';
import { createGatewayApp, loadGatewayConfig } from './app';

/** A gateway whose three subgraphs are all at `subgraphUrl`, listening on free ports. */
async function startGateway(
  keys: ReturnType<typeof testKeys>,
  subgraphUrl: string,
): Promise<{ gateway: ServiceApp; server: RunningService }> {
  const config = loadGatewayConfig({
    ...keys.env('gateway'),
    ACCOUNTS_URL: subgraphUrl,
    BANKING_URL: subgraphUrl,
    OMS_URL: subgraphUrl,
    AUTH_JWKS_URL: 'http://127.0.0.1:9/.well-known/jwks.json',
  });
  const gateway = await createGatewayApp(config, { logger: createLogger('gateway', 'silent'), store: new MemoryStore() });
  const server = await listenService(gateway, { public: { port: 0, host: '127.0.0.1' }, internal: { port: 0, host: '127.0.0.1' } });
  return { gateway, server };
}

/** The gateway against subgraphs that are down: who it lets in, and errors that keep no internal address. */
describe('gateway', () => {
  const keys = testKeys();
  const claims = { sub: 'u', sid: 's', kind: 'pat' as const, scope: ['read:accounts'] };
  let gateway: ServiceApp;
  let server: RunningService;

  beforeAll(async () => {
    ({ gateway, server } = await startGateway(keys, 'http://127.0.0.1:9/graphql'));
  });
  afterAll(async () => {
    await server.close();
    await gateway.close();
  });

  const ask = (url: string, header: string, query = '{ accounts { id } }') =>
    http('POST', `${url}/graphql`, { body: { query }, headers: { 'x-internal-claims': header } });

  it('answers an unreachable subgraph as a plain SERVICE_UNAVAILABLE (the caller may retry), naming nothing internal', async () => {
    const res = await ask(server.internal.url, await keys.sign(claims, 'gateway', 'rest-facade'));
    expect(res.body.errors[0]).toMatchObject({
      message: 'A service is temporarily unavailable',
      extensions: { code: 'SERVICE_UNAVAILABLE' },
    });
    const text = JSON.stringify(res.body);
    expect(text).not.toContain('127.0.0.1:9');
    expect(text).not.toContain('serviceName');
    expect(text).not.toContain('stacktrace');
  });

  it('attack: a captured facade claims header replayed at the public listener is ignored (a bearer token is required)', async () => {
    const res = await ask(server.public.url, await keys.sign(claims, 'gateway', 'rest-facade'));
    expect(res.status).toBe(401);
    expect(res.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('attack: on the internal listener, only claims the facade signed for the gateway, still fresh, get in', async () => {
    const refused = [
      await keys.sign(claims, 'gateway', 'oms'), // a subgraph cannot mint user claims for the gateway
      await keys.sign(claims, 'gateway', 'accounts'),
      await keys.sign(claims, 'accounts', 'rest-facade'), // addressed to another service
      await keys.sign({ ...claims, scope: ['internal:holds'] }, 'gateway', 'rest-facade'), // beyond what an edge may pass on
      'not.a.jwt',
    ];
    for (const header of refused) expect((await ask(server.internal.url, header)).status).toBe(401);
    // Signed with a key nobody trusts (its kid names the facade).
    const stranger = testKeys();
    expect((await ask(server.internal.url, await stranger.sign(claims, 'gateway', 'rest-facade'))).status).toBe(401);
    // A header older than its lifetime (minutes old, as a captured one would be).
    const old = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: keys.identity('rest-facade').SERVICE_KEY.kid, typ: 'internal+jwt' })
      .setIssuer('rest-facade')
      .setAudience('gateway')
      .setJti('j')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 120)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(keys.identity('rest-facade').SERVICE_KEY.privateKey);
    expect((await ask(server.internal.url, old)).status).toBe(401);
  });

  it('answers 503 when it cannot verify tokens, never access', async () => {
    const res = await http('POST', `${server.public.url}/graphql`, {
      body: { query: '{ accounts { id } }' },
      token: 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1In0.c2ln',
    });
    expect(res.status).toBe(503);
    expect(res.body.errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
    expect(res.body.data ?? null).toBeNull();
  });

  it('answers a request the client got wrong with a 400 that says what, never a 500', async () => {
    const header = await keys.sign(claims, 'gateway', 'rest-facade');
    const unknownName = await http('POST', `${server.internal.url}/graphql`, {
      body: { query: 'query Accounts { accounts { id } }', operationName: 'Stale' },
      headers: { 'x-internal-claims': header },
    });
    expect(unknownName.status).toBe(400);
    expect(unknownName.body.errors[0].extensions.code).toBe('OPERATION_RESOLUTION_FAILURE');
    expect(unknownName.body.errors[0].message).toContain('Stale');
    const twoUnnamed = await http('POST', `${server.internal.url}/graphql`, {
      body: { query: 'query A { accounts { id } } query B { accounts { id } }' },
      headers: { 'x-internal-claims': header },
    });
    expect(twoUnnamed.status).toBe(400);
    expect(twoUnnamed.body.errors[0].extensions.code).toBe('OPERATION_RESOLUTION_FAILURE');
    const noQuery = await http('POST', `${server.internal.url}/graphql`, {
      body: { variables: {} },
      headers: { 'x-internal-claims': header },
    });
    expect(noQuery.status).toBe(400);
    expect(noQuery.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(noQuery.body.errors[0].message).toMatch(/query/i);
  });

  it('has introspection and field suggestions off unless GRAPHQL_INTROSPECTION=true; metrics only on the internal listener', async () => {
    const header = await keys.sign(claims, 'gateway', 'rest-facade');
    const schema = await ask(server.internal.url, header, '{ __schema { types { name } } }');
    expect(schema.body.data ?? null).toBeNull();
    expect(JSON.stringify(schema.body)).toMatch(/introspection/i);
    const typo = await ask(server.internal.url, header, '{ acounts { id } }');
    expect(typo.body.errors[0].message).not.toMatch(/did you mean/i);
    expect((await http('GET', `${server.public.url}/metrics`)).status).toBe(404);
    expect((await http('GET', `${server.internal.url}/metrics`)).status).toBe(200);
  });
});

/** Subgraphs behind a load balancer that has no instance ready (all restarting, or waiting for Redis to fail over). */
describe('gateway, its subgraphs behind a load balancer with no instance ready', () => {
  const keys = testKeys();
  const claims = { sub: 'u', sid: 's', kind: 'pat' as const, scope: ['read:accounts'] };
  let balancer: Server;
  let gateway: ServiceApp;
  let server: RunningService;

  beforeAll(async () => {
    // What HAProxy answers when every server of a backend is down.
    balancer = createServer((_req, res) => {
      res.writeHead(503, { 'content-type': 'text/html' });
      res.end('<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>\n');
    });
    await new Promise<void>((r) => balancer.listen(0, '127.0.0.1', () => r()));
    ({ gateway, server } = await startGateway(keys, `http://127.0.0.1:${(balancer.address() as AddressInfo).port}/graphql`));
  });
  afterAll(async () => {
    await server.close();
    await gateway.close();
    await new Promise((r) => balancer.close(r));
  });

  it("answers SERVICE_UNAVAILABLE (a 503 the facade relays with Retry-After), never the balancer's page or a 500", async () => {
    const res = await http('POST', `${server.internal.url}/graphql`, {
      body: { query: '{ accounts { id } }' },
      headers: { 'x-internal-claims': await keys.sign(claims, 'gateway', 'rest-facade') },
    });
    expect(res.body.errors).toEqual([{ message: 'A service is temporarily unavailable', extensions: { code: 'SERVICE_UNAVAILABLE' } }]);
  });
});
