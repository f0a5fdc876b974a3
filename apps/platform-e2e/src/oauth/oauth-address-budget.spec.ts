import { randomBytes } from 'node:crypto';
import { Agent, request } from 'undici';
import { http } from '@trading/testing';
import { DEMO_USERS } from '@trading/platform';
import { authorizationParams } from '../support/oauth-fapi-helpers';
import { authorizationCode, provisionApp, tokensFor, type ProvisionedApp } from '../support/oauth-helpers';
import { extraFacade } from '../support/pat-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const alice = { email: DEMO_USERS[0]!.email, password: DEMO_USERS[0]!.password };
const BUDGET = 5;

/**
 * /oauth/* and /pat/login, at the facade and at auth's public listener: an address that keeps
 * failing (guessing codes, secrets) is refused with 429 before anything runs; correct token
 * traffic is never counted, and other addresses are unaffected. Through the facade, addresses
 * come from X-Forwarded-For through a facade that trusts the loopback proxy; straight at auth (which
 * believes no X-Forwarded-For), from the socket: each caller connects from an address of its own
 * in 127.0.0.0/8.
 */
describe('OAuth address budget on every listener', () => {
  let p: TestPlatform;
  let vendor: ProvisionedApp;
  let proxy: Awaited<ReturnType<typeof extraFacade>>;
  const attacker = '203.0.113.7';
  const backend = '198.51.100.9';
  const token = (from: string, body: Record<string, string>) =>
    http('POST', `${proxy.api}/oauth/token`, { body, headers: { 'x-forwarded-for': from } });
  const creds = () => ({ client_id: vendor.clientId, client_secret: vendor.clientSecret });

  beforeAll(async () => {
    p = await startTestPlatform({ OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE: String(BUDGET) });
    vendor = await provisionApp(p);
    proxy = await extraFacade(p, ['loopback']);
  }, 60_000);
  afterAll(async () => {
    await proxy?.close();
    await Promise.all([...agents.values()].map((a) => a.close()));
    await p?.stop();
  });

  /** A request from a connection bound to `address` (a loopback address of its own: what the listener sees as the client). */
  const agents = new Map<string, Agent>();
  const from = async (address: string, method: string, url: string, body?: unknown) => {
    let agent = agents.get(address);
    if (!agent) agents.set(address, (agent = new Agent({ localAddress: address })));
    const res = await request(url, {
      method: method as 'GET' | 'POST',
      dispatcher: agent,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    let parsed: any = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: res.statusCode, headers: res.headers, body: parsed };
  };
  /** A refresh that fails on the client's secret: what a guesser sends. */
  const refreshWithWrongSecret = () => ({
    grant_type: 'REFRESH_TOKEN',
    refresh_token: randomBytes(32).toString('base64url'),
    client_id: vendor.clientId,
    client_secret: 'tcs_wrong',
  });
  const pushed = (secret = vendor.clientSecret) => ({ ...authorizationParams(vendor).params, client_secret: secret });

  it('refuses an address over its budget of failing token requests with 429 and Retry-After; another address’s correct requests still succeed', async () => {
    const guess = () => ({
      grant_type: 'AUTH_CODE',
      code: randomBytes(32).toString('base64url'),
      redirect_uri: vendor.redirectUri,
      code_verifier: randomBytes(32).toString('base64url'),
    });
    for (let i = 0; i < BUDGET; i++) {
      const res = await token(
        attacker,
        i % 2 ? { ...guess(), ...creds() } : { ...guess(), client_id: vendor.clientId, client_secret: 'tcs_wrong' },
      );
      expect([400, 401]).toContain(res.status);
    }
    const refused = await token(attacker, { ...guess(), ...creds() });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.body.error).toBe('temporarily_unavailable');

    // The vendor's backend, another address: a full exchange, then more correct refreshes than the budget.
    const c = await authorizationCode(p, vendor, alice);
    const exchanged = await token(backend, {
      grant_type: 'AUTH_CODE',
      code: c.code,
      redirect_uri: c.redirectUri,
      code_verifier: c.verifier,
      ...creds(),
    });
    expect(exchanged.status).toBe(200);
    let refreshToken = exchanged.body.refresh_token as string;
    for (let i = 0; i < BUDGET + 3; i++) {
      const res = await token(backend, { grant_type: 'REFRESH_TOKEN', refresh_token: refreshToken, ...creds() });
      expect(res.status).toBe(200);
      refreshToken = res.body.refresh_token;
    }
    // The attacker's address is still refused, even with a correct request.
    expect((await token(attacker, { grant_type: 'REFRESH_TOKEN', refresh_token: refreshToken, ...creds() })).status).toBe(429);
  });

  it('attack: failing PAR requests straight at auth’s public listener are refused with 429 once the address’s budget is spent, however the path is spelled; another address’s correct requests are never counted', async () => {
    const attacker = '127.0.0.2';
    const vendorBackend = '127.0.0.3';
    const par = (address: string, body: unknown, path = '/oauth/par') => from(address, 'POST', `${p.urls.login}${path}`, body);
    for (let i = 0; i < BUDGET; i++) expect((await par(attacker, pushed('tcs_wrong'))).status).toBe(401);

    const refused = await par(attacker, pushed('tcs_wrong'));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['ratelimit-policy']).toBe(`"oauth-address";q=${BUDGET};w=60`);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect(refused.body).toMatchObject({ error: 'temporarily_unavailable' });
    // Refused before anything runs: the right secret too, another spelling of the path, the other endpoints.
    expect((await par(attacker, pushed())).status).toBe(429);
    expect((await par(attacker, pushed('tcs_wrong'), '/OAuth/PAR')).status).toBe(429);
    expect((await par(attacker, pushed('tcs_wrong'), '/oauth/par/')).status).toBe(429);
    expect((await from(attacker, 'POST', `${p.urls.login}/oauth/token`, { grant_type: 'REFRESH_TOKEN', refresh_token: 'x' })).status).toBe(
      429,
    );
    const login = await from(attacker, 'POST', `${p.urls.login}/pat/login`, { token: 'tpat_guess' });
    expect([login.status, login.body.code]).toEqual([429, 'RATE_LIMITED']);

    // The vendor's backend, another address: more correct pushes than the budget, none counted.
    for (let i = 0; i < BUDGET + 3; i++) expect((await par(vendorBackend, pushed())).status).toBe(201);
    expect((await par(vendorBackend, pushed('tcs_wrong'))).status).toBe(401);
  });

  it('attack: alternating between the facade and auth’s public listener buys an address no more than one budget', async () => {
    const attacker = '127.0.0.4';
    const guess = refreshWithWrongSecret();
    const listeners = [`${p.urls.api}/oauth/token`, `${p.urls.login}/oauth/token`];
    for (let i = 0; i < BUDGET; i++) expect([400, 401]).toContain((await from(attacker, 'POST', listeners[i % 2]!, guess)).status);
    for (const url of listeners) expect((await from(attacker, 'POST', url, guess)).status).toBe(429);
  });

  it('attack: the API’s spelling at auth’s public listener ({base_url}/oauth/*, where an ingress sends it straight to auth) spends the same budget, however it is spelled', async () => {
    const attacker = '127.0.0.5';
    const guess = refreshWithWrongSecret();
    const apiPath = new URL(p.urls.api).pathname;
    expect(apiPath).toBe('/v1');
    const direct = `${p.urls.login}${apiPath}/oauth/token`;
    // Failures at the ingress's address alone spend the budget: counted like every other spelling.
    for (let i = 0; i < BUDGET; i++) expect((await from(attacker, 'POST', direct, guess)).status).toBe(401);
    const refused = await from(attacker, 'POST', direct, guess);
    expect([refused.status, refused.body.error]).toEqual([429, 'temporarily_unavailable']);
    for (const url of [
      `${p.urls.login}/V1/OAuth/token`,
      `${p.urls.login}${apiPath}/oauth/par`,
      `${p.urls.api}/oauth/token`,
      `${p.urls.login}/oauth/token`,
    ])
      expect([url, (await from(attacker, 'POST', url, guess)).status]).toEqual([url, 429]);
    // Another address's correct refreshes there are never counted.
    const tokens = await tokensFor(p, vendor, alice);
    let refreshToken = tokens.refresh_token;
    for (let i = 0; i < BUDGET + 2; i++) {
      const res = await from('127.0.0.6', 'POST', direct, { grant_type: 'REFRESH_TOKEN', refresh_token: refreshToken, ...creds() });
      expect(res.status).toBe(200);
      refreshToken = res.body.refresh_token;
    }
  });
});
