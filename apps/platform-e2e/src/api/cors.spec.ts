import { http } from '@trading/testing';
import { DEMO_USERS } from '@trading/platform';
import { adminCli } from '../support/admin-cli';
import { admin, provisionApp, registration, tokenRequest, tokensFor, type ProvisionedApp } from '../support/oauth-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const alice = { email: DEMO_USERS[0]!.email, password: DEMO_USERS[0]!.password };
/** The facade keeps the registered origins this long (30 s deployed): a suspension shows within it. */
const CACHE_MS = 300;
const ORIGIN = 'https://web.cors-vendor.example';
const LOCAL_ORIGIN = 'http://localhost:5173';

const corsHeaders = (headers: Headers) => [...headers.keys()].filter((name) => name.startsWith('access-control-'));

/** Browser pages of registered web origins may call /v1 (CORS); nobody else, and never /v1/oauth/*. */
describe('CORS for registered web origins', () => {
  let p: TestPlatform;
  let app: ProvisionedApp;
  const preflight = (path: string, origin: string, method = 'GET', headers = 'authorization') =>
    http('OPTIONS', `${p.urls.api}${path}`, {
      headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
    });

  beforeAll(async () => {
    p = await startTestPlatform({}, { facade: { CORS_ORIGINS_CACHE_MS: CACHE_MS } });
    app = await provisionApp(p, { webOrigins: [ORIGIN, LOCAL_ORIGIN] });
  }, 60_000);
  afterAll(() => p?.stop());

  it('registration refuses anything but exact https (or loopback http) origins, naming the item', async () => {
    const bad = [
      'http://evil.example',
      'https://vendor.example/app',
      'https://*.vendor.example',
      '*',
      'https://vendor.example/',
      'HTTPS://Vendor.example',
    ];
    const res = await admin(p, 'POST', '/apps', { registration: registration({ webOrigins: bad }) });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body.field).toBe('webOrigins[0]');
    expect(res.body.problems).toEqual([
      { field: 'webOrigins[0]', message: expect.stringMatching(/must use https/) },
      { field: 'webOrigins[1]', message: expect.stringMatching(/origin only .* without a path/) },
      { field: 'webOrigins[2]', message: expect.stringMatching(/wildcards/) },
      { field: 'webOrigins[3]', message: expect.stringMatching(/exact origin/) },
      { field: 'webOrigins[4]', message: 'must be written as browsers send it in Origin: https://vendor.example' },
      { field: 'webOrigins[5]', message: 'must be written as browsers send it in Origin: https://vendor.example' },
    ]);
    expect(res.body.detail).toContain('webOrigins[0] must use https');

    // Loopback http, ports and IPv6 loopback are fine; the list is shown with the credentials.
    const ok = await admin(p, 'POST', '/apps', {
      registration: registration({ webOrigins: ['http://127.0.0.1:3000', 'http://[::1]:8080', 'https://web.vendor.example:8443'] }),
    });
    expect(ok.status).toBe(201);
    expect(ok.body.webOrigins).toEqual(['http://127.0.0.1:3000', 'http://[::1]:8080', 'https://web.vendor.example:8443']);
  });

  it('promotion takes each environment its own web origins (CLI --web-origin), checked the same way; apps list shows them', async () => {
    const other = await provisionApp(p);
    const refused = await admin(p, 'POST', `/apps/${other.appId}/promote`, {
      redirectUris: ['https://uat.vendor.example/cb'],
      webOrigins: ['https://uat.vendor.example/path'],
    });
    expect(refused.status).toBe(422);
    expect(refused.body.field).toBe('webOrigins[0]');

    const promoted = await adminCli(p, [
      'apps',
      'promote',
      '--app',
      other.appId,
      '--redirect-uri',
      'https://uat.vendor.example/cb',
      '--web-origin',
      'https://uat.vendor.example',
      '--web-origin',
      'https://uat2.vendor.example',
    ]);
    expect(promoted.stderr).toBe('');
    expect(promoted.code).toBe(0);
    expect(promoted.stdout).toContain('web origins    https://uat.vendor.example https://uat2.vendor.example');

    const listed = await adminCli(p, ['apps', 'list']);
    expect(listed.stdout).toContain('web origins: https://uat.vendor.example https://uat2.vendor.example');
    const json = JSON.parse((await adminCli(p, ['apps', 'list', '--json'])).stdout);
    const entry = json.apps.find((a: { appId: string }) => a.appId === app.appId);
    expect(entry.environments).toEqual([expect.objectContaining({ environment: 'DEV', webOrigins: [ORIGIN, LOCAL_ORIGIN] })]);

    // This deployment is DEV: origins registered for UAT only get no CORS here.
    const uat = await preflight('/accounts', 'https://uat.vendor.example');
    expect(uat.status).toBe(204);
    expect(corsHeaders(uat.headers)).toEqual([]);
  });

  it('answers a registered origin’s preflight with that exact origin, the methods and the four headers, before authentication', async () => {
    for (const origin of [ORIGIN, LOCAL_ORIGIN]) {
      const res = await preflight('/accounts', origin, 'GET', 'authorization, idempotency-key');
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
      expect(res.headers.get('access-control-allow-methods')).toBe('GET, PATCH, POST, DELETE, PUT');
      expect(res.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type, Idempotency-Key, Last-Event-ID, DPoP');
      expect(res.headers.get('access-control-max-age')).toBe('600');
      expect(res.headers.get('vary')).toMatch(/\bOrigin\b/);
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    }
    const order = await preflight('/oms/some-account/order', ORIGIN, 'POST', 'authorization, content-type, idempotency-key');
    expect(order.status).toBe(204);
    expect(order.headers.get('access-control-allow-origin')).toBe(ORIGIN);
  });

  it('lets the page read an actual response (token in Authorization, no cookies), errors and budgets included', async () => {
    const { access_token } = await tokensFor(p, app, alice);
    const res = await http('GET', `${p.urls.api}/accounts`, { token: access_token, headers: { origin: ORIGIN } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(res.headers.get('vary')).toMatch(/\bOrigin\b/);
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    const exposed = res.headers.get('access-control-expose-headers')!.split(', ');
    expect(exposed).toEqual(expect.arrayContaining(['RateLimit-Remaining', 'X-RateLimit-Remaining', 'Retry-After', 'X-Request-Id']));

    const unauthenticated = await http('GET', `${p.urls.api}/accounts`, { headers: { origin: ORIGIN } });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('access-control-allow-origin')).toBe(ORIGIN);

    // The same call from an unregistered page: answered (the browser, not the API, withholds it), without CORS headers.
    const stranger = await http('GET', `${p.urls.api}/accounts`, { token: access_token, headers: { origin: 'https://evil.example' } });
    expect(stranger.status).toBe(200);
    expect(corsHeaders(stranger.headers)).toEqual([]);
  });

  it('gives unregistered origins no CORS headers at all', async () => {
    for (const origin of [
      'https://evil.example',
      'https://web.cors-vendor.example.evil.example',
      'http://web.cors-vendor.example',
      'null',
    ]) {
      const res = await preflight('/accounts', origin);
      expect(res.status).toBe(204);
      expect(corsHeaders(res.headers)).toEqual([]);
    }
  });

  it('keeps /v1/oauth/* server-to-server: no CORS headers on the token endpoint, preflight or POST', async () => {
    const pre = await preflight('/oauth/token', ORIGIN, 'POST', 'content-type');
    expect(corsHeaders(pre.headers)).toEqual([]);
    const post = await http('POST', `${p.urls.api}/oauth/token`, {
      body: { grant_type: 'REFRESH_TOKEN', refresh_token: 'trt_nope', client_id: app.clientId, client_secret: app.clientSecret },
      headers: { origin: ORIGIN },
    });
    expect(post.status).toBeGreaterThanOrEqual(400);
    expect(corsHeaders(post.headers)).toEqual([]);
    const form = await tokenRequest(`${p.urls.api}/oauth/token`, { grant_type: 'REFRESH_TOKEN', refresh_token: 'x' }, { form: true });
    expect(corsHeaders(form.headers)).toEqual([]);
    const revoke = await preflight('/OAuth/revoke', ORIGIN, 'POST');
    expect(corsHeaders(revoke.headers)).toEqual([]);
  });

  it("serves the origin list on auth's internal listener to the facade's signed identity only", async () => {
    const anonymous = await http('GET', `${p.urls.authInternal}/internal/web-origins`);
    expect(anonymous.status).toBe(401);
    expect(JSON.stringify(anonymous.body)).not.toContain(ORIGIN);
  });

  it('stops answering a suspended app’s origins within the cache time', async () => {
    const origin = 'https://soon-suspended.example';
    const doomed = await provisionApp(p, { webOrigins: [origin] });
    await waitFor(async () => (await preflight('/accounts', origin)).headers.get('access-control-allow-origin') === origin);
    const suspended = await adminCli(p, ['apps', 'suspend', '--app', doomed.clientId]);
    expect(suspended.code).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, CACHE_MS + 100));
    const res = await preflight('/accounts', origin);
    expect(res.status).toBe(204);
    expect(corsHeaders(res.headers)).toEqual([]);
    // Other apps' origins are unaffected.
    expect((await preflight('/accounts', ORIGIN)).headers.get('access-control-allow-origin')).toBe(ORIGIN);
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('CORS preflights and budgets', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ API_ADDRESS_RATE_LIMIT_PER_MINUTE: '2' }, { facade: { CORS_ORIGINS_CACHE_MS: CACHE_MS } });
    await provisionApp(p, { webOrigins: [ORIGIN] });
  }, 60_000);
  afterAll(() => p?.stop());

  it("spend no one's budget: a page's preflights leave the address budget untouched", async () => {
    const preflight = (origin: string) =>
      http('OPTIONS', `${p.urls.api}/accounts`, { headers: { origin, 'access-control-request-method': 'GET' } });
    for (let i = 0; i < 10; i++) {
      expect((await preflight(ORIGIN)).headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect((await preflight(`https://made-up-${i}.example`)).status).toBe(204);
    }
    // Both of the address's two tokenless requests are still there, then 429 (with CORS headers, so the page can read Retry-After).
    expect((await http('GET', `${p.urls.api}/accounts`, { headers: { origin: ORIGIN } })).status).toBe(401);
    expect((await http('GET', `${p.urls.api}/accounts`, { headers: { origin: ORIGIN } })).status).toBe(401);
    const limited = await http('GET', `${p.urls.api}/accounts`, { headers: { origin: ORIGIN } });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});
