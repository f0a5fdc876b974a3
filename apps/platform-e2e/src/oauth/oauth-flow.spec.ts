import { AuthorizationCode } from 'simple-oauth2';
import { http } from '@trading/testing';
import { DEMO_USERS } from '@trading/platform';
import { newUser } from '../support/pat-helpers';
import {
  admin,
  authorizationCode,
  exchange,
  loginPath,
  pkce,
  provisionApp,
  refresh,
  tokenRequest,
  tokensFor,
  UserAgent,
  type ProvisionedApp,
} from '../support/oauth-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const alice = { email: DEMO_USERS[0]!.email, password: DEMO_USERS[0]!.password };

/**
 * The authorization code flow with PKCE end to end over HTTP: login page, sign-in, consent, code exchange through the
 * facade, API calls with exactly the granted scopes, userinfo, refresh, revocation (by the
 * client and in the dashboard), metadata, and an off-the-shelf client library.
 */
describe('OAuth 2.0 authorization code flow with PKCE', () => {
  let p: TestPlatform;
  let app: ProvisionedApp;

  beforeAll(async () => {
    p = await startTestPlatform();
    app = await provisionApp(p, { scopes: ['read:accounts', 'read:banking', 'read:orders'] });
  }, 60_000);
  afterAll(() => p?.stop());

  it('issues tokens that carry exactly the granted scopes, and the API enforces them', async () => {
    const c = await authorizationCode(p, app, alice, 'read:accounts');
    const res = await exchange(p, app, c);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      access_token: expect.any(String),
      refresh_token: expect.stringMatching(/^trt_/),
      expires_in: 3600,
      token_type: 'Bearer',
      scope: 'read:accounts',
    });
    const [, payload] = (res.body.access_token as string).split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    expect(claims).toMatchObject({ kind: 'oauth', client_id: app.clientId, scope: 'read:accounts' });
    // The app knows the user by its own pairwise subject only, never by the platform's user id.
    expect(claims.sub).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(claims.sub).not.toBe((await p.auth.users.findByEmail(alice.email))!.id);
    expect(claims.exp - claims.iat).toBe(3600);

    const accounts = await http('GET', `${p.urls.api}/accounts`, { token: res.body.access_token });
    expect(accounts.status).toBe(200);
    expect(accounts.body.accounts.map((a: { number: string }) => a.number)).toEqual(expect.arrayContaining(['DU1000001', 'DU1000002']));
    // read:banking was approved for the app but not granted by this consent: refused.
    const balance = await http('GET', `${p.urls.api}/banking/${accounts.body.accounts[0].id}/balance`, { token: res.body.access_token });
    expect(balance.status).toBe(403);
    expect(balance.headers.get('www-authenticate')).toContain('insufficient_scope');
  });

  it('serves userinfo for read:accounts only, through the facade', async () => {
    const tokens = await tokensFor(p, app, alice, 'read:accounts,read:banking');
    expect(tokens.scope).toBe('read:accounts read:banking');
    const me = await http('GET', `${p.urls.api}/oauth/userinfo`, { token: tokens.access_token });
    expect(me.status).toBe(200);
    // The same pairwise sub as the token's, and no platform user id.
    expect(me.body).toEqual({
      sub: JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString()).sub,
      email: alice.email,
      firstName: 'Alice',
      lastName: 'Anders',
    });

    const bankingOnly = await tokensFor(p, app, alice, 'read:banking');
    const refused = await http('GET', `${p.urls.api}/oauth/userinfo`, { token: bankingOnly.access_token });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('insufficient_scope');
    expect(refused.headers.get('www-authenticate')).toContain('scope="read:accounts"');
    const none = await http('GET', `${p.urls.api}/oauth/userinfo`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="trading-api", DPoP realm="trading-api", algs="ES256 EdDSA PS256"');
    const bad = await http('GET', `${p.urls.api}/oauth/userinfo`, { token: 'not.a.token' });
    expect(bad.status).toBe(401);
    expect(bad.body.error).toBe('invalid_token');
  });

  it('refreshes: a new pair each time, the old refresh token replaced; scope may narrow but never widen', async () => {
    const first = await tokensFor(p, app, alice, 'read:accounts read:banking');
    const second = await refresh(p.urls.api, app, first.refresh_token);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect(second.body.scope).toBe('read:accounts read:banking');
    expect((await http('GET', `${p.urls.api}/accounts`, { token: second.body.access_token })).status).toBe(200);

    const wider = await refresh(p.urls.api, app, second.body.refresh_token, { scope: 'read:accounts read:orders' });
    expect(wider.status).toBe(400);
    expect(wider.body.error).toBe('invalid_scope');
    const narrower = await refresh(p.urls.api, app, second.body.refresh_token, { scope: 'read:banking' });
    expect(narrower.status).toBe(200);
    expect(narrower.body.scope).toBe('read:banking');
    expect((await http('GET', `${p.urls.api}/accounts`, { token: narrower.body.access_token })).status).toBe(403);
    // The grant keeps its scope: the next refresh may ask for all of it again.
    const back = await refresh(p.urls.api, app, narrower.body.refresh_token);
    expect(back.body.scope).toBe('read:accounts read:banking');
  });

  it('revokes a refresh token (RFC 7009): the grant and its access tokens end at once; unknown tokens get 200', async () => {
    const tokens = await tokensFor(p, app, alice);
    const other = await refresh(p.urls.api, app, (await tokensFor(p, app, alice)).refresh_token);
    const revoke = (token: string, auth: [string, string] = [app.clientId, app.clientSecret]) =>
      tokenRequest(`${p.urls.api}/oauth/revoke`, { token, token_type_hint: 'refresh_token' }, { form: true, basic: auth });

    expect((await revoke(tokens.refresh_token, [app.clientId, 'wrong'])).status).toBe(401);
    expect((await revoke('trt_unknown-token-0000000000000000')).status).toBe(200);
    expect((await revoke(tokens.refresh_token)).status).toBe(200);
    expect((await http('GET', `${p.urls.api}/accounts`, { token: tokens.access_token })).status).toBe(401);
    expect((await refresh(p.urls.api, app, tokens.refresh_token)).body.error).toBe('invalid_grant');
    // Another grant of the same user and app is untouched.
    expect((await http('GET', `${p.urls.api}/accounts`, { token: other.body.access_token })).status).toBe(200);
    // An access token can be revoked on its own.
    expect((await revoke(other.body.access_token)).status).toBe(200);
    expect((await http('GET', `${p.urls.api}/accounts`, { token: other.body.access_token })).status).toBe(401);
  });

  it('lists authorised apps in the dashboard, where revoking one ends every token of that grant', async () => {
    const user = await newUser(p);
    const ua = new UserAgent(p.urls.login);
    const c = await authorizationCode(p, app, user, 'read:accounts', ua);
    const tokens = (await exchange(p, app, c)).body;
    expect((await http('GET', `${p.urls.api}/oauth/userinfo`, { token: tokens.access_token })).status).toBe(200);

    const dashboard = await ua.request('GET', '/en/developer');
    const grantId = /data-grant-id="([^"]+)"/.exec(dashboard.body)?.[1];
    expect(dashboard.body).toContain('E2E Portfolio App');
    expect(grantId).toBeDefined();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(dashboard.body)![1]!;
    expect((await ua.request('POST', `/en/developer/apps/${grantId}/revoke`, { _csrf: 'forged' })).status).toBe(403);
    const revoked = await ua.request('POST', `/en/developer/apps/${grantId}/revoke`, { _csrf: csrf });
    expect(revoked.status).toBe(303);
    expect((await ua.request('GET', revoked.location!)).body).toContain('Access for E2E Portfolio App is revoked');
    expect((await http('GET', `${p.urls.api}/oauth/userinfo`, { token: tokens.access_token })).status).toBe(401);
    expect((await refresh(p.urls.api, app, tokens.refresh_token)).body.error).toBe('invalid_grant');
    // Someone else's grant id is "not found".
    const stranger = new UserAgent(p.urls.login);
    const page = await stranger.open('/en/developer', { email: alice.email, password: alice.password });
    const aliceCsrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
    expect((await stranger.request('POST', `/en/developer/apps/${grantId}/revoke`, { _csrf: aliceCsrf })).status).toBe(404);
  });

  it("leads from GET {base_url}/oauth/authorize to the login page with the same parameters, in the user's language", async () => {
    const { challenge } = pkce();
    const path = loginPath({
      clientId: app.clientId,
      redirectUri: app.redirectUri,
      scopes: 'read:accounts',
      state: 's1',
      challenge,
      method: 'S256',
    });
    const query = path.slice(path.indexOf('?'));
    const res = await fetch(`${p.urls.api}/oauth/authorize${query}`, {
      redirect: 'manual',
      headers: { 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' },
    });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`http://localhost:${p.config.AUTH_PORT}/de/login${query}`);
    const page = await new UserAgent(p.urls.login).open(`/de/login${query}`, alice);
    expect(page.body).toContain('möchte auf Ihr Trading-API-Konto zugreifen');
    expect(page.body).toContain('Ihre Konten, Positionen, Margin und Ihr Profil');
    // Standard space-separated `scope` works too.
    const std = await new UserAgent(p.urls.login).open(
      loginPath({
        clientId: app.clientId,
        redirectUri: app.redirectUri,
        state: 's',
        challenge,
        method: 'S256',
        extra: { scope: 'read:accounts read:banking' },
      }),
      alice,
    );
    expect(std.body).toContain('data-scope="read:banking"');
  });

  it('publishes RFC 8414 metadata and the JWKS it points to', async () => {
    const meta = await http('GET', `${p.urls.login}/.well-known/oauth-authorization-server`);
    expect(meta.status).toBe(200);
    expect(meta.body).toMatchObject({
      issuer: `http://localhost:${p.config.AUTH_PORT}`,
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      response_types_supported: ['code'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    });
    expect(meta.body.token_endpoint).toMatch(/\/v1\/oauth\/token$/);
    const jwks = await http('GET', `${p.urls.login}/.well-known/jwks.json`);
    expect(jwks.body.keys[0]).toMatchObject({ kty: 'EC', alg: 'ES256', kid: expect.any(String) });
  });

  it('works with an off-the-shelf OAuth client library (simple-oauth2, form-encoded, HTTP Basic and body credentials)', async () => {
    for (const authorizationMethod of ['header', 'body'] as const) {
      const client = new AuthorizationCode({
        client: { id: app.clientId, secret: app.clientSecret },
        auth: {
          tokenHost: p.urls.api.replace(/\/v1$/, ''),
          tokenPath: '/v1/oauth/token',
          revokePath: '/v1/oauth/revoke',
          authorizeHost: p.urls.login,
          authorizePath: '/en/login',
        },
        options: { authorizationMethod, bodyFormat: 'form' },
      });
      const { verifier, challenge } = pkce();
      const url = new URL(
        client.authorizeURL({
          redirect_uri: app.redirectUri,
          scope: ['read:accounts', 'read:banking'],
          state: 'lib-state',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        } as never),
      );
      const ua = new UserAgent(p.urls.login);
      const page = await ua.open(url.pathname + url.search, alice);
      const back = new URL((await ua.answer(page, 'approve')).location!);
      expect(back.searchParams.get('state')).toBe('lib-state');

      const token = await client.getToken({
        code: back.searchParams.get('code')!,
        redirect_uri: app.redirectUri,
        code_verifier: verifier,
      } as never);
      expect(token.token).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'read:accounts read:banking' });
      expect((await http('GET', `${p.urls.api}/accounts`, { token: token.token['access_token'] as string })).status).toBe(200);
      const refreshed = await token.refresh();
      expect(refreshed.token['refresh_token']).not.toBe(token.token['refresh_token']);
      expect((await http('GET', `${p.urls.api}/accounts`, { token: refreshed.token['access_token'] as string })).status).toBe(200);
      await refreshed.revoke('refresh_token');
      expect((await http('GET', `${p.urls.api}/accounts`, { token: refreshed.token['access_token'] as string })).status).toBe(401);
    }
  });

  it('answers RFC 6749 §5.2 errors as { error, error_description }', async () => {
    const url = `${p.urls.api}/oauth/token`;
    const cases: Array<[Record<string, string>, { form?: boolean; basic?: [string, string] }, number, string]> = [
      [
        {
          grant_type: 'AUTH_CODE',
          code: 'x'.repeat(43),
          redirect_uri: app.redirectUri,
          client_id: app.clientId,
          client_secret: 'wrong',
          code_verifier: 'v'.repeat(43),
        },
        {},
        401,
        'invalid_client',
      ],
      [
        { grant_type: 'AUTH_CODE', code: 'x'.repeat(43), redirect_uri: app.redirectUri, code_verifier: 'v'.repeat(43) },
        {},
        401,
        'invalid_client',
      ],
      [
        { grant_type: 'password', username: 'a', password: 'b' },
        { form: true, basic: [app.clientId, app.clientSecret] },
        400,
        'unsupported_grant_type',
      ],
      [{ code: 'x' }, { form: true, basic: [app.clientId, app.clientSecret] }, 400, 'invalid_request'],
      [
        { grant_type: 'authorization_code', code: 'x'.repeat(43), redirect_uri: app.redirectUri, code_verifier: 'v'.repeat(43) },
        { form: true, basic: [app.clientId, app.clientSecret] },
        400,
        'invalid_grant',
      ],
      [
        { grant_type: 'refresh_token', refresh_token: 'trt_' + 'x'.repeat(43), client_secret: app.clientSecret },
        { form: true, basic: [app.clientId, app.clientSecret] },
        400,
        'invalid_request',
      ],
    ];
    for (const [params, options, status, error] of cases) {
      const res = await tokenRequest(url, params, options);
      expect([res.status, res.body.error]).toEqual([status, error]);
      expect(typeof res.body.error_description).toBe('string');
      if (status === 401) expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    }
    const repeated = await http('POST', url, {
      body: `grant_type=refresh_token&grant_type=authorization_code`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect([repeated.status, repeated.body.error]).toEqual([400, 'invalid_request']);
    const notJson = await http('POST', url, { body: '{"grant_type":', headers: { 'content-type': 'application/json' } });
    expect([notJson.status, notJson.body.error]).toEqual([400, 'invalid_request']);
    const suspended = await provisionApp(p);
    expect((await admin(p, 'POST', `/apps/${suspended.appId}/suspend`)).status).toBe(200);
    const refusedClient = await tokenRequest(
      url,
      { grant_type: 'refresh_token', refresh_token: 'trt_' + 'x'.repeat(43) },
      { form: true, basic: [suspended.clientId, suspended.clientSecret] },
    );
    expect([refusedClient.status, refusedClient.body.error]).toEqual([400, 'unauthorized_client']);
  });
});
