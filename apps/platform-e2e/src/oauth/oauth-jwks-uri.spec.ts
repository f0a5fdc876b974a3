import { http, startHttpsTestServer, type HttpsTestServer } from '@trading/testing';
import { admin, extraAuth, provisionApp, registration, type ProvisionedApp } from '../support/oauth-helpers';
import { assertionParams, authorizationParams, clientAssertion, clientKey, pushRequest } from '../support/oauth-fapi-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

/**
 * A private_key_jwt app may publish its keys at a jwks_uri, which auth fetches on the app's word:
 * it must not become a way to make auth call this network (blind SSRF).
 */
describe('jwks_uri: fetched from public addresses only', () => {
  let p: TestPlatform;
  let keys: HttpsTestServer;
  let key: Awaited<ReturnType<typeof clientKey>>;
  let issuer: string;
  /** A pushed authorization request by `app`, authenticated by an assertion signed with `key`, at `base` (the facade's {base_url} or an auth listener). */
  const pushWithAssertion = async (base: string, app: ProvisionedApp, aud = issuer) =>
    pushRequest(`${base}/oauth/par`, {
      ...authorizationParams(app).params,
      ...assertionParams(await clientAssertion(key, app.clientId, aud)),
    });

  beforeAll(async () => {
    p = await startTestPlatform();
    key = await clientKey('ES256');
    keys = await startHttpsTestServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key.jwk] }));
    });
    ({ issuer } = (await http('GET', `${p.urls.login}/.well-known/openid-configuration`)).body);
  }, 60_000);
  afterAll(async () => {
    await keys?.close();
    await p?.stop();
  });

  it('attack: registering a jwksUri that is not https, or names this network, is refused naming jwksUri', async () => {
    for (const jwksUri of [
      'http://keys.vendor.example/jwks',
      `https://127.0.0.1:${keys.port}/jwks`,
      `https://localhost:${keys.port}/jwks`,
      `https://[::1]:${keys.port}/jwks`,
      `https://[::ffff:127.0.0.1]:${keys.port}/jwks`,
      'https://169.254.169.254/latest/meta-data/iam/security-credentials/',
      'https://[fd00:ec2::254]/latest/meta-data/',
      'https://10.0.0.8/jwks',
      'https://172.16.0.1/jwks',
      'https://192.168.0.1/jwks',
      'https://100.64.0.1/jwks',
      'https://[fe80::1]/jwks',
    ]) {
      const res = await admin(p, 'POST', '/apps', { registration: registration({ tokenEndpointAuthMethod: 'private_key_jwt', jwksUri }) });
      expect([jwksUri, res.status, res.body.problems]).toEqual([
        jwksUri,
        422,
        [
          {
            field: 'jwksUri',
            message: expect.stringMatching(/^must be (an https URL|a public https URL: .* is a non-public address)/),
          },
        ],
      ]);
    }
    const app = await provisionApp(p);
    const promoted = await admin(p, 'POST', `/apps/${app.appId}/promote`, {
      redirectUris: ['https://uat.vendor.example/cb'],
      policy: { tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'https://169.254.169.254/jwks' },
    });
    expect([promoted.status, promoted.body.problems]).toEqual([
      422,
      [{ field: 'jwksUri', message: expect.stringContaining('link-local') }],
    ]);
  });

  it('attack: a stored jwks_uri leading to this machine or the metadata address is never connected to; the client gets invalid_client', async () => {
    const before = keys.connections;
    for (const jwksUri of [
      `https://127.0.0.1:${keys.port}/jwks`,
      // A name resolved when auth connects: localhost is this machine, whatever a name said at registration.
      `https://localhost:${keys.port}/jwks`,
      `https://[::1]:${keys.port}/jwks`,
      `https://[::ffff:7f00:1]:${keys.port}/jwks`,
      'https://169.254.169.254/latest/meta-data/jwks',
    ]) {
      // Registered with a public name, then changed in the database: as a row from before the rule, or a name that moved.
      const app = await provisionApp(p, { tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'https://keys.vendor.example/jwks' });
      await p.auth.dataSource.query('UPDATE vendor_app_credentials SET jwks_uri = $2 WHERE client_id = $1', [app.clientId, jwksUri]);
      const started = Date.now();
      const res = await pushWithAssertion(p.urls.api, app);
      expect([jwksUri, res.status, res.body.error, res.body.error_description]).toEqual([
        jwksUri,
        401,
        'invalid_client',
        expect.stringContaining('does not lead to a public address'),
      ]);
      // Refused before any connection, not after waiting for one.
      expect(Date.now() - started).toBeLessThan(2000);
    }
    expect(keys.connections).toBe(before);
  });

  it('with the DEV exception on (off by default, refused outside DEV), a jwks_uri on this machine works', async () => {
    await expect(
      extraAuth(p, { APP_ENV: 'PROD', SMTP_URL: 'smtp://mail.example:25', OAUTH_JWKS_URI_ALLOW_LOOPBACK: true }),
    ).rejects.toThrow(/OAUTH_JWKS_URI_ALLOW_LOOPBACK: may be true only when APP_ENV is DEV/);

    const dev = await extraAuth(p, { OAUTH_JWKS_URI_ALLOW_LOOPBACK: true }, p.store, undefined, { clientKeys: { ca: keys.ca } });
    try {
      const jwksUri = `https://localhost:${keys.port}/jwks`;
      const issued = await dev.app.registry.provision(registration({ tokenEndpointAuthMethod: 'private_key_jwt', jwksUri }));
      const app: ProvisionedApp = { ...issued, appId: issued.app.id, redirectUri: issued.redirectUris[0]! };
      const before = keys.requests;
      const devIssuer = (await http('GET', `${dev.url}/.well-known/openid-configuration`)).body.issuer;
      const pushed = await pushWithAssertion(dev.url, app, devIssuer);
      expect([pushed.status, pushed.body.error_description]).toEqual([201, undefined]);
      expect(keys.requests).toBe(before + 1);

      // The same app at the platform's auth, where the exception is off: refused, and nothing connects.
      const connections = keys.connections;
      const refused = await pushWithAssertion(p.urls.api, app);
      expect([refused.status, refused.body.error]).toEqual([401, 'invalid_client']);
      expect(keys.connections).toBe(connections);
    } finally {
      await dev.close();
    }
  });
});
