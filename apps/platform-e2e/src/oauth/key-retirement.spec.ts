import { createLocalJWKSet, jwtVerify } from 'jose';
import { ACCESS_TOKEN_AUDIENCE } from '@trading/auth';
import { connectEdgeStore } from '@trading/redis';
import { http } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { adminCli } from '../support/admin-cli';
import { extraAuth } from '../support/oauth-helpers';
import { patSession } from '../support/sessions';
import { inDays, startTestPlatform, type TestPlatform } from '../support/test-platform';

const [alice] = DEMO_USERS as [(typeof DEMO_USERS)[0]];
const aliceMargin = DEMO_ACCOUNTS[1]!.id;

/**
 * `keys rotate` then `keys retire`: the retired key's tokens are refused at both edges the moment
 * retire answers, although the edges cache verified tokens until they expire and the JWKS for
 * minutes; the new key's tokens work at once (the edges fetched the JWKS seconds before).
 */
describe('signing-key retirement takes effect at the edges', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform();
  }, 60_000);
  afterAll(() => p?.stop());

  const kidOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).kid as string;
  const facade = (token: string) => http('GET', `${p.urls.api}/accounts`, { token }).then((r) => r.status);
  const gateway = (token: string) =>
    http('POST', p.urls.gateway, { token, body: { query: `{ account(id: "${aliceMargin}") { number } }` } }).then((r) =>
      r.status === 200 && !r.body.data?.account?.number ? 'no data' : r.status,
    );

  it('refuses a token of the retired key (401) at the facade and the gateway right after `keys retire`; the new key’s tokens work', async () => {
    const old = await patSession(p, alice.email, 'READ_ONLY');
    // Both edges have verified (and cached) the old token and fetched the JWKS.
    expect(await facade(old)).toBe(200);
    expect(await gateway(old)).toBe(200);

    const rotated = await adminCli(p, ['keys', 'rotate']);
    expect(rotated.code).toBe(0);
    const fresh = await patSession(p, alice.email, 'READ_ONLY');
    expect(kidOf(fresh)).not.toBe(kidOf(old));
    // A key seconds old is fetched at once, not after the JWKS cooldown.
    expect(await facade(fresh)).toBe(200);
    expect(await gateway(fresh)).toBe(200);
    expect(await facade(old)).toBe(200); // still published until retired

    const retired = await adminCli(p, ['keys', 'retire', '--kid', kidOf(old)]);
    expect(retired.code).toBe(0);
    const facadeRes = await http('GET', `${p.urls.api}/accounts`, { token: old });
    expect(facadeRes.status).toBe(401);
    expect(JSON.stringify(facadeRes.body)).toContain('retired');
    const gatewayRes = await http('POST', p.urls.gateway, { token: old, body: { query: `{ account(id: "${aliceMargin}") { number } }` } });
    expect(gatewayRes.status).toBe(401);
    expect(gatewayRes.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');

    expect(await facade(fresh)).toBe(200);
    expect(await gateway(fresh)).toBe(200);
  });

  it('another auth instance signs with the new key as soon as `keys rotate` and `keys retire` answer, and publishes no retired key, though it reloads its keys only once a minute', async () => {
    // A second instance of auth (its own Redis connections, as a deployed one has) whose periodic reload never comes in this test.
    const store = await connectEdgeStore({ REDIS_URL: p.config.REDIS_URL, SESSION_CACHE_ENTRIES: 1000 });
    const other = await extraAuth(p, { AUTH_SIGNING_KEY_RELOAD_MS: 60_000 }, store);
    try {
      const user = (await p.auth.users.findByEmail(alice.email))!;
      const pat = async () =>
        (await p.auth.pats.create({ userId: user.id, name: 'other instance', access: 'READ_ONLY', expires: inDays(7) })).token;
      const loginThere = async () => {
        const res = await http('POST', `${other.url}/pat/login`, { body: { token: await pat() } });
        expect(res.status).toBe(200);
        return res.body.token as string;
      };
      const publishedThere = async () =>
        ((await http('GET', `${other.url}/.well-known/jwks.json`)).body.keys as Array<{ kid: string }>).map((k) => k.kid);
      const admin = (path: string) => http('POST', `${p.urls.adminApi}/admin/keys${path}`, { token: p.adminToken });

      const before = kidOf(await loginThere());
      // Each time straight after the admin API answered, through the instance that made neither change.
      const rotated = await admin('/rotate');
      expect(rotated.status).toBe(201);
      expect(kidOf(await loginThere())).toBe(rotated.body.kid);
      expect(await publishedThere()).toEqual(expect.arrayContaining([before, rotated.body.kid]));

      const retired = await admin(`/${before}/retire`);
      expect(retired.body).toMatchObject({ kid: before, status: 'RETIRED' });
      const signed = await loginThere();
      expect(kidOf(signed)).toBe(rotated.body.kid);
      expect(await publishedThere()).not.toContain(before);
      // Verified by the keys the platform's own auth publishes (the edges fetch these).
      const platformKeys = createLocalJWKSet((await http('GET', `${p.urls.login}/.well-known/jwks.json`)).body);
      await expect(jwtVerify(signed, platformKeys, { audience: ACCESS_TOKEN_AUDIENCE })).resolves.toBeDefined();
    } finally {
      await other.close();
      await store.close();
    }
  });
});
