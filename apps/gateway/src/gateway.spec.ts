import { InternalClaimsCodec } from '@trading/auth';
import { createLogger } from '@trading/logging';
import { MemoryStore } from '@trading/redis';
import { listen, type RunningServer, type ServiceApp } from '@trading/service';
import { http, testSecret } from '@trading/testing';
import { createGatewayApp, loadGatewayConfig } from './app';

/** The gateway against subgraphs that are down: errors must keep no internal address. */
describe('gateway error masking', () => {
  const secret = testSecret();
  let gateway: ServiceApp;
  let server: RunningServer;

  beforeAll(async () => {
    const config = loadGatewayConfig({
      INTERNAL_SIGNING_KEY: secret,
      GATEWAY_PORT: '0',
      ACCOUNTS_URL: 'http://127.0.0.1:9/graphql',
      BANKING_URL: 'http://127.0.0.1:9/graphql',
      OMS_URL: 'http://127.0.0.1:9/graphql',
      AUTH_JWKS_URL: 'http://127.0.0.1:9/.well-known/jwks.json',
    });
    gateway = await createGatewayApp(config, { logger: createLogger('gateway', 'silent'), store: new MemoryStore() });
    server = await listen(gateway.app, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await server.close();
    await gateway.close();
  });

  it('masks an unreachable subgraph as a plain internal error', async () => {
    const claims = await new InternalClaimsCodec(secret).sign({ sub: 'u', sid: 's', kind: 'pat', scope: ['read:accounts'] });
    const res = await http('POST', `${server.url}/graphql`, { body: { query: '{ accounts { id } }' }, headers: { 'x-internal-claims': claims } });
    expect(res.body.errors[0]).toMatchObject({ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } });
    const text = JSON.stringify(res.body);
    expect(text).not.toContain('127.0.0.1:9');
    expect(text).not.toContain('serviceName');
    expect(text).not.toContain('stacktrace');
  });

  it('answers 503 when it cannot verify tokens, never access', async () => {
    const res = await http('POST', `${server.url}/graphql`, { body: { query: '{ accounts { id } }' }, token: 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1In0.c2ln' });
    expect(res.status).toBe(503);
    expect(res.body.errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
    expect(res.body.data ?? null).toBeNull();
  });
});
