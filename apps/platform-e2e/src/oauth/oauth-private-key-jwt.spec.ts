import { http } from '@trading/testing';
import { DEMO_USERS } from '@trading/platform';
import { admin, authorizationCode, provisionApp, registration, tokenRequest, type ProvisionedApp } from '../support/oauth-helpers';
import {
  assertionParams,
  authorizationParams,
  clientAssertion,
  clientKey,
  consentByRequestUri,
  pushRequest,
} from '../support/oauth-fapi-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const alice = { email: DEMO_USERS[0]!.email, password: DEMO_USERS[0]!.password };

/** private_key_jwt (RFC 7523) at the token, PAR and revocation endpoints, and what it refuses. */
describe('private_key_jwt client authentication', () => {
  let p: TestPlatform;
  let app: ProvisionedApp;
  let key: Awaited<ReturnType<typeof clientKey>>;
  let issuer: string;
  let tokenEndpoint: string;
  const token = () => `${p.urls.api}/oauth/token`;
  /** A code exchange authenticated by `assertion` (a fresh code each time). */
  const exchangeWith = async (assertion: string) => {
    const c = await authorizationCode(p, app, alice);
    return tokenRequest(
      token(),
      {
        grant_type: 'authorization_code',
        code: c.code,
        redirect_uri: c.redirectUri,
        code_verifier: c.verifier,
        ...assertionParams(assertion),
      },
      { form: true },
    );
  };

  beforeAll(async () => {
    p = await startTestPlatform();
    key = await clientKey('ES256');
    const ed = await clientKey('EdDSA');
    const rsa = await clientKey('PS256');
    app = await provisionApp(p, { tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [key.jwk, ed.jwk, rsa.jwk] } });
    Object.assign(key, { others: [ed, rsa] });
    const meta = await http('GET', `${p.urls.login}/.well-known/openid-configuration`);
    ({ issuer, token_endpoint: tokenEndpoint } = meta.body);
  }, 60_000);
  afterAll(() => p?.stop());

  it('exchanges a code, refreshes, pushes a request and revokes with assertions (ES256, EdDSA, PS256; aud = the issuer)', async () => {
    const res = await exchangeWith(await clientAssertion(key, app.clientId, issuer));
    expect(res.status).toBe(200);
    const [ed, rsa] = (key as unknown as { others: Array<typeof key> }).others;
    const refreshed = await tokenRequest(
      token(),
      {
        grant_type: 'refresh_token',
        refresh_token: res.body.refresh_token,
        ...assertionParams(await clientAssertion(ed!, app.clientId, issuer)),
      },
      { form: true },
    );
    expect(refreshed.status).toBe(200);
    // JSON dialect, PS256.
    const json = await http('POST', token(), {
      body: {
        grant_type: 'REFRESH_TOKEN',
        refresh_token: refreshed.body.refresh_token,
        ...assertionParams(await clientAssertion(rsa!, app.clientId, issuer)),
      },
    });
    expect(json.status).toBe(200);

    const a = authorizationParams(app);
    const pushed = await pushRequest(`${p.urls.api}/oauth/par`, {
      ...a.params,
      ...assertionParams(await clientAssertion(key, app.clientId, issuer)),
    });
    expect(pushed.status).toBe(201);
    const { back } = await consentByRequestUri(p, app.clientId, pushed.body.request_uri, alice);
    const viaPar = await tokenRequest(
      token(),
      {
        grant_type: 'authorization_code',
        code: back!.searchParams.get('code')!,
        redirect_uri: app.redirectUri,
        code_verifier: a.verifier,
        ...assertionParams(await clientAssertion(key, app.clientId, issuer)),
      },
      { form: true },
    );
    expect(viaPar.status).toBe(200);

    const revoked = await tokenRequest(
      `${p.urls.api}/oauth/revoke`,
      { token: viaPar.body.refresh_token, ...assertionParams(await clientAssertion(key, app.clientId, issuer)) },
      { form: true },
    );
    expect(revoked.status).toBe(200);
  });

  it('attack: an assertion replayed (same jti) is refused, even at another endpoint', async () => {
    const assertion = await clientAssertion(key, app.clientId, issuer);
    expect((await exchangeWith(assertion)).status).toBe(200);
    const replayed = await exchangeWith(assertion);
    expect([replayed.status, replayed.body.error]).toEqual([401, 'invalid_client']);
    expect(replayed.body.error_description).toContain('jti replayed');
    const atPar = await pushRequest(`${p.urls.api}/oauth/par`, { ...authorizationParams(app).params, ...assertionParams(assertion) });
    expect([atPar.status, atPar.body.error]).toEqual([401, 'invalid_client']);
  });

  it('attack: an assertion for another audience, for an endpoint, or for several audiences at once is refused: aud is the issuer alone, a string', async () => {
    for (const aud of [
      'https://other-server.example',
      `${issuer}/somewhere-else`,
      tokenEndpoint,
      tokenEndpoint.replace(/\/token$/, '/par'),
      [issuer, 'https://other.example'],
      [issuer],
    ]) {
      const res = await exchangeWith(await clientAssertion(key, app.clientId, issuer, { aud }));
      expect([aud, res.status, res.body.error, res.body.error_description]).toEqual([
        aud,
        401,
        'invalid_client',
        expect.stringContaining('aud'),
      ]);
    }
  });

  it('attack: an expired assertion, or one living longer than 5 minutes, is refused', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await exchangeWith(await clientAssertion(key, app.clientId, issuer, { iat: now - 600, exp: now - 120 }));
    expect([expired.status, expired.body.error, expired.body.error_description]).toEqual([
      401,
      'invalid_client',
      expect.stringContaining('expired'),
    ]);
    const tooLong = await exchangeWith(await clientAssertion(key, app.clientId, issuer, { exp: now + 3600 }));
    expect([tooLong.status, tooLong.body.error_description]).toEqual([401, expect.stringContaining('at most 300 seconds')]);
  });

  it('attack: an assertion issued an hour ahead, or without iat, is refused; 60 s ahead (a fast clock) passes', async () => {
    const now = Math.floor(Date.now() / 1000);
    const ahead = await exchangeWith(await clientAssertion(key, app.clientId, issuer, { iat: now + 3600, exp: now + 3660 }));
    expect([ahead.status, ahead.body.error, ahead.body.error_description]).toEqual([401, 'invalid_client', expect.stringContaining('iat')]);
    const noIat = await exchangeWith(await clientAssertion(key, app.clientId, issuer, { iat: undefined }));
    expect([noIat.status, noIat.body.error_description]).toEqual([401, expect.stringContaining('iat')]);
    const fast = await exchangeWith(await clientAssertion(key, app.clientId, issuer, { iat: now + 55, exp: now + 115 }));
    expect(fast.status).toBe(200);
  });

  it('attack: an RS256 assertion (not allowed by FAPI 2.0) is refused, and an RS256 key cannot be registered', async () => {
    const rs = await clientKey('RS256');
    const refused = await admin(p, 'POST', '/apps', {
      registration: registration({ tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [rs.jwk] } }),
    });
    expect([refused.status, refused.body.problems[0].field]).toEqual([422, 'jwks.keys[0]']);
    // Signed RS256 with a registered RSA key's private half: the algorithm alone is refused.
    const rsa = (key as unknown as { others: Array<typeof key> }).others[1]!;
    const asRs256 = await exchangeWith(await clientAssertion({ ...rsa, alg: 'RS256' }, app.clientId, issuer));
    expect([asRs256.status, asRs256.body.error]).toEqual([401, 'invalid_client']);
  });

  it('attack: an assertion signed by a key the app did not register is refused (same kid too)', async () => {
    const stranger = await clientKey('ES256', key.kid);
    const res = await exchangeWith(await clientAssertion(stranger, app.clientId, issuer));
    expect([res.status, res.body.error, res.body.error_description]).toEqual([
      401,
      'invalid_client',
      expect.stringContaining('registered keys'),
    ]);
    // Claiming to be another app: that app's keys are checked, not the signer's.
    const other = await provisionApp(p);
    const asOther = await exchangeWith(await clientAssertion(key, other.clientId, issuer));
    expect([asOther.status, asOther.body.error]).toEqual([401, 'invalid_client']);
  });

  it("attack: a private_key_jwt app's client secret is refused (Basic and body); a secret app cannot use assertions", async () => {
    const c = await authorizationCode(p, app, alice);
    const params = { grant_type: 'authorization_code', code: c.code, redirect_uri: c.redirectUri, code_verifier: c.verifier };
    const body = await tokenRequest(token(), { ...params, client_id: app.clientId, client_secret: app.clientSecret }, { form: true });
    expect([body.status, body.body.error, body.body.error_description]).toEqual([
      401,
      'invalid_client',
      expect.stringContaining('private_key_jwt'),
    ]);
    const basic = await tokenRequest(token(), params, { form: true, basic: [app.clientId, app.clientSecret] });
    expect([basic.status, basic.body.error]).toEqual([401, 'invalid_client']);
    // The code was not spent by those: the right authentication still gets it.
    const right = await tokenRequest(
      token(),
      { ...params, ...assertionParams(await clientAssertion(key, app.clientId, issuer)) },
      { form: true },
    );
    expect(right.status).toBe(200);

    const secretApp = await provisionApp(p, { jwks: { keys: [key.jwk] } });
    const c2 = await authorizationCode(p, secretApp, alice);
    const assertion = await clientAssertion(key, secretApp.clientId, issuer);
    const refused = await tokenRequest(
      token(),
      {
        grant_type: 'authorization_code',
        code: c2.code,
        redirect_uri: c2.redirectUri,
        code_verifier: c2.verifier,
        ...assertionParams(assertion),
      },
      { form: true },
    );
    expect([refused.status, refused.body.error_description]).toEqual([401, expect.stringContaining('not registered for private_key_jwt')]);
  });

  it('counts failed assertions as failed client authentications (the lockout), while a valid assertion still passes', async () => {
    const failures = 20; // OAUTH_CLIENT_MAX_FAILURES, its default
    const stranger = await clientKey('ES256');
    let last = 0;
    for (let i = 0; i <= failures; i++) {
      const res = await pushRequest(`${p.urls.api}/oauth/par`, {
        ...authorizationParams(app).params,
        ...assertionParams(await clientAssertion(stranger, app.clientId, issuer)),
      });
      last = res.status;
    }
    expect(last).toBe(429);
    const valid = await pushRequest(`${p.urls.api}/oauth/par`, {
      ...authorizationParams(app).params,
      ...assertionParams(await clientAssertion(key, app.clientId, issuer)),
    });
    expect(valid.status).toBe(201);
  });

  it('advertises private_key_jwt and its algorithms', async () => {
    const meta = await http('GET', `${p.urls.login}/.well-known/oauth-authorization-server`);
    expect(meta.body.token_endpoint_auth_methods_supported).toEqual(['client_secret_basic', 'client_secret_post', 'private_key_jwt']);
    expect(meta.body.token_endpoint_auth_signing_alg_values_supported).toEqual(['ES256', 'PS256', 'EdDSA']);
    expect(meta.body.revocation_endpoint_auth_signing_alg_values_supported).toEqual(['ES256', 'PS256', 'EdDSA']);
  });
});
