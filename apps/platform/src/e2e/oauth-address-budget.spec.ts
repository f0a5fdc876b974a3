import { randomBytes } from 'node:crypto';
import { http } from '@trading/testing';
import { DEMO_USERS } from '../app';
import { authorizationCode, provisionApp, type ProvisionedApp } from './oauth-helpers';
import { extraFacade } from './pat-helpers';
import { startTestPlatform, type TestPlatform } from './test-platform';

const alice = { email: DEMO_USERS[0]!.email, password: DEMO_USERS[0]!.password };
const BUDGET = 5;

/**
 * /v1/oauth/* at the facade: an address that keeps failing (guessing codes, secrets) is refused
 * with 429 before the facade signs or forwards anything; correct token traffic is never counted,
 * and other addresses are unaffected. Addresses come from X-Forwarded-For through a facade that
 * trusts the loopback proxy.
 */
describe('OAuth address budget at the facade', () => {
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
    await p?.stop();
  });

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
    expect(refused.body.code).toBe('RATE_LIMITED');

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
});
