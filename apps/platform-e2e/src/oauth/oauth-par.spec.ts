import { http } from '@trading/testing';
import { DEMO_USERS } from '@trading/platform';
import { exchange, extraAuth, loginPath, pkce, provisionApp, UserAgent, type ProvisionedApp } from '../support/oauth-helpers';
import { authorizationParams, consentByRequestUri, pushRequest } from '../support/oauth-fapi-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const alice = { email: DEMO_USERS[0]!.email, password: DEMO_USERS[0]!.password };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const REQUEST_URI = /^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/;

/** POST {base_url}/oauth/par (RFC 9126), request_uri at the authorization endpoint, per-app PAR policy. */
describe('pushed authorization requests (RFC 9126)', () => {
  let p: TestPlatform;
  let app: ProvisionedApp;
  let other: ProvisionedApp;
  let parOnly: ProvisionedApp;
  const par = () => `${p.urls.api}/oauth/par`;
  const withSecret = (a: ProvisionedApp, params: Record<string, string>) => ({ ...params, client_secret: a.clientSecret });

  beforeAll(async () => {
    p = await startTestPlatform();
    app = await provisionApp(p);
    other = await provisionApp(p);
    parOnly = await provisionApp(p, { requirePushedAuthorizationRequests: true });
  }, 60_000);
  afterAll(() => p?.stop());

  it('pushes a checked request through the facade (JSON, form and HTTP Basic), then signs in by client_id and request_uri alone', async () => {
    const a = authorizationParams(app);
    const pushed = await pushRequest(par(), withSecret(app, a.params));
    expect(pushed.status).toBe(201);
    expect(pushed.headers.get('cache-control')).toBe('no-store');
    expect(pushed.body).toEqual({ request_uri: expect.stringMatching(REQUEST_URI), expires_in: 60 });
    // Other query parameters are ignored: the pushed ones count (here the redirect URI and state).
    const { back } = await consentByRequestUri(p, app.clientId, pushed.body.request_uri, alice, undefined, {
      redirect_uri: 'https://evil.example/cb',
      state: 'not-this-one',
    });
    expect(`${back!.origin}${back!.pathname}`).toBe(app.redirectUri);
    expect(back!.searchParams.get('state')).toBe(a.state);
    expect(back!.searchParams.get('iss')).toBe(`http://localhost:${p.config.AUTH_PORT}`);
    const tokens = await exchange(p, app, { code: back!.searchParams.get('code')!, verifier: a.verifier, redirectUri: app.redirectUri });
    expect(tokens.status).toBe(200);

    const json = await pushRequest(par(), withSecret(app, authorizationParams(app).params), { json: true });
    expect([json.status, json.body.expires_in]).toEqual([201, 60]);
    const basic = await pushRequest(par(), authorizationParams(app).params, { basic: [app.clientId, app.clientSecret] });
    expect(basic.status).toBe(201);
  });

  it('checks a pushed request as the authorization endpoint would, answering OAuth JSON errors', async () => {
    const base = authorizationParams(app).params;
    const cases: Array<[Record<string, string>, number, string]> = [
      [{ ...base, redirect_uri: 'https://evil.example/cb' }, 400, 'invalid_request'],
      [{ ...base, response_type: 'token' }, 400, 'unsupported_response_type'],
      [{ ...base, code_challenge_method: 'plain' }, 400, 'invalid_request'],
      [{ ...base, scope: 'write:orders' }, 400, 'invalid_scope'],
      [{ ...base, request_uri: 'urn:ietf:params:oauth:request_uri:x' }, 400, 'invalid_request'],
    ];
    for (const [params, status, error] of cases) {
      const res = await pushRequest(par(), withSecret(app, params));
      expect([params, res.status, res.body.error]).toEqual([params, status, error]);
      expect(res.body.error_description).toEqual(expect.any(String));
    }
    const wrong = await pushRequest(par(), { ...base, client_secret: 'tcs_wrong' });
    expect([wrong.status, wrong.body.error]).toEqual([401, 'invalid_client']);
    expect(wrong.headers.get('www-authenticate')).toContain('Basic');
    // Another client's id in the body than the one authenticating: refused.
    const mixed = await pushRequest(par(), { ...base, client_id: other.clientId }, { basic: [app.clientId, app.clientSecret] });
    expect([mixed.status, mixed.body.error]).toEqual([400, 'invalid_request']);
  });

  it('attack: a request_uri works once; the second use (another browser too) gets an error page, not a consent page', async () => {
    const pushed = await pushRequest(par(), withSecret(app, authorizationParams(app).params));
    const first = await consentByRequestUri(p, app.clientId, pushed.body.request_uri, alice);
    expect(first.back!.searchParams.get('code')).toEqual(expect.any(String));
    const again = await consentByRequestUri(p, app.clientId, pushed.body.request_uri, alice);
    expect(again.page.status).toBe(400);
    expect(again.page.body).toContain('request_uri is unknown, has expired or was already used');
    expect(again.back).toBeNull();
  });

  it("attack: another client's request_uri gets an error page and stays usable by its own client", async () => {
    const pushed = await pushRequest(par(), withSecret(app, authorizationParams(app).params));
    const stolen = await consentByRequestUri(p, other.clientId, pushed.body.request_uri, alice);
    expect(stolen.page.status).toBe(400);
    expect(stolen.back).toBeNull();
    const own = await consentByRequestUri(p, app.clientId, pushed.body.request_uri, alice);
    expect(own.back!.searchParams.get('code')).toEqual(expect.any(String));
  });

  it('attack: an expired request_uri (OAUTH_PAR_TTL_SECONDS) gets an error page', async () => {
    const short = await extraAuth(p, { OAUTH_PAR_TTL_SECONDS: 1 });
    try {
      const pushed = await pushRequest(`${short.url}/oauth/par`, withSecret(app, authorizationParams(app).params));
      expect([pushed.status, pushed.body.expires_in]).toEqual([201, 1]);
      await sleep(1500);
      const late = await consentByRequestUri(p, app.clientId, pushed.body.request_uri, alice, new UserAgent(short.url));
      expect(late.page.status).toBe(400);
      expect(late.page.body).toContain('request_uri is unknown, has expired or was already used');
    } finally {
      await short.close();
    }
  });

  it('attack: an app that requires PAR has its plain authorization request refused; pushed, it goes through', async () => {
    const { challenge } = pkce();
    const ua = new UserAgent(p.urls.login);
    const plain = await ua.open(
      loginPath({
        clientId: parOnly.clientId,
        redirectUri: parOnly.redirectUri,
        scopes: 'read:accounts',
        state: 's1',
        challenge,
        method: 'S256',
      }),
      alice,
    );
    expect(plain.status).toBe(303);
    const refused = new URL(plain.location!);
    expect(refused.searchParams.get('error')).toBe('invalid_request');
    expect(refused.searchParams.get('error_description')).toContain('PAR');
    expect(refused.searchParams.get('code')).toBeNull();
    const a = authorizationParams(parOnly);
    const pushed = await pushRequest(par(), withSecret(parOnly, a.params));
    const { back } = await consentByRequestUri(p, parOnly.clientId, pushed.body.request_uri, alice);
    const tokens = await exchange(p, parOnly, {
      code: back!.searchParams.get('code')!,
      verifier: a.verifier,
      redirectUri: parOnly.redirectUri,
    });
    expect(tokens.status).toBe(200);

    const listed = await http('GET', `${p.urls.adminApi}/admin/apps`, { token: p.adminToken });
    const entry = listed.body.apps.find((x: { appId: string }) => x.appId === parOnly.appId);
    expect(entry.environments[0]).toMatchObject({ requirePushedAuthorizationRequests: true, dpopBoundAccessTokens: false });
  });

  it('advertises PAR in the server metadata', async () => {
    const meta = await http('GET', `${p.urls.login}/.well-known/oauth-authorization-server`);
    expect(meta.body).toMatchObject({
      pushed_authorization_request_endpoint: meta.body.token_endpoint.replace(/\/token$/, '/par'),
      require_pushed_authorization_requests: false,
    });
    expect(meta.body.pushed_authorization_request_endpoint).toMatch(/\/v1\/oauth\/par$/);
  });
});
