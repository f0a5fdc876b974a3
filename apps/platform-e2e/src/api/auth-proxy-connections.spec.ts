import { createConnection, createServer, type Server } from 'node:net';
import { http } from '@trading/testing';
import { provisionApp, type ProvisionedApp } from '../support/oauth-helpers';
import { extraFacade } from '../support/pat-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

/**
 * `{base_url}/oauth/token` is the URL a vendor's backend calls for every user's refresh: the
 * facade passes it to auth's internal listener over kept-alive connections, not a new TCP
 * connection per request. A relay between a facade and auth counts the connections made.
 */
describe('the facade’s connections to auth', () => {
  let p: TestPlatform;
  let vendor: ProvisionedApp;
  let relay: Server;
  let facade: Awaited<ReturnType<typeof extraFacade>>;
  let connections = 0;

  beforeAll(async () => {
    p = await startTestPlatform();
    vendor = await provisionApp(p);
    const auth = new URL(p.urls.authInternal);
    relay = createServer((client) => {
      connections += 1;
      const upstream = createConnection(Number(auth.port), auth.hostname);
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const port = (relay.address() as { port: number }).port;
    facade = await extraFacade(p, [], p.urls.api, `http://127.0.0.1:${port}`);
  }, 60_000);
  afterAll(async () => {
    await facade?.close();
    await new Promise((resolve) => relay?.close(resolve));
    await p?.stop();
  });

  it('sends sequential token requests over one kept-alive connection, each still answered by auth', async () => {
    for (let i = 0; i < 12; i++) {
      const res = await http('POST', `${facade.api}/oauth/token`, {
        body: {
          grant_type: 'REFRESH_TOKEN',
          refresh_token: `rt_unknown_${i}`,
          client_id: vendor.clientId,
          client_secret: vendor.clientSecret,
        },
      });
      // Auth's own answer (an unknown refresh token), not the proxy's.
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_grant');
    }
    expect(connections).toBe(1);
  });
});
