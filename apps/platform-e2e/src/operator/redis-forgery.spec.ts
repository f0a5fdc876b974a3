import { createHash, randomUUID } from 'node:crypto';
import { deriveServiceSecret } from '@trading/auth';
import { SealedStore } from '@trading/redis';
import { DEMO_USERS } from '@trading/platform';
import { provisionApp, refresh, tokenRequest, tokensFor, type ProvisionedApp } from '../support/oauth-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const [alice, bob] = DEMO_USERS as [(typeof DEMO_USERS)[0], (typeof DEMO_USERS)[0]];
const digest = (token: string) => createHash('sha256').update(token).digest('base64url');

/**
 * Redis is not a root of trust for identity. Each attack writes to Redis what an
 * attacker holding it could write, and shows auth gives nothing for it.
 */
describe('records forged in Redis', () => {
  let p: TestPlatform;
  let app: ProvisionedApp;
  let aliceId: string;
  let bobId: string;
  /** What an attacker who had also stolen auth's seal key could write (the last line of defence is PostgreSQL). */
  let withSealKey: SealedStore;

  beforeAll(async () => {
    p = await startTestPlatform();
    app = await provisionApp(p, { scopes: ['read:accounts', 'read:banking', 'write:banking'] });
    aliceId = (await p.auth.users.findByEmail(alice.email))!.id;
    bobId = (await p.auth.users.findByEmail(bob.email))!.id;
    withSealKey = new SealedStore(p.store, deriveServiceSecret(p.identityOf('auth').SERVICE_KEY, 'redis-records'));
  }, 60_000);
  afterAll(() => p?.stop());

  const grantOf = async (refreshToken: string) => JSON.parse((await withSealKey.get(`oauth-refresh:${digest(refreshToken)}`))!).grant;

  it('attack: a refresh-token record written straight into Redis (naming bob) is refused, and no token is issued', async () => {
    const { refresh_token: genuine } = await tokensFor(p, app, alice, 'read:accounts');
    const grant = await grantOf(genuine);
    const forged = `trt_${randomUUID().replace(/-/g, '')}${randomUUID().replace(/-/g, '')}`;
    const record = { grant: { ...grant, userId: bobId }, expiresAt: Date.now() + 60_000 };
    await p.store.set(`oauth-refresh:${digest(forged)}`, JSON.stringify(record), 60);
    const res = await refresh(p.urls.api, app, forged);
    expect(res).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(res.body.access_token).toBeUndefined();
  });

  it('attack: even sealed with the stolen key, a refresh record naming another user or a wider scope is refused by the grant in PostgreSQL', async () => {
    const { refresh_token: genuine, access_token: first } = await tokensFor(p, app, alice, 'read:accounts');
    const grant = await grantOf(genuine);
    for (const changed of [{ userId: bobId }, { scope: ['read:accounts', 'write:banking'] }, { id: randomUUID() }]) {
      const forged = `trt_${randomUUID().replace(/-/g, '')}${randomUUID().replace(/-/g, '')}`;
      await withSealKey.set(
        `oauth-refresh:${digest(forged)}`,
        JSON.stringify({ grant: { ...grant, ...changed }, expiresAt: Date.now() + 60_000 }),
        60,
      );
      const res = await refresh(p.urls.api, app, forged);
      expect(res).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    }
    // The genuine token still works: the forgeries burnt nothing of alice's.
    const ok = await refresh(p.urls.api, app, genuine);
    expect(ok.status).toBe(200);
    const claims = JSON.parse(Buffer.from(ok.body.access_token.split('.')[1], 'base64url').toString());
    // Still alice, by the app's pairwise subject.
    expect(claims).toMatchObject({
      sub: JSON.parse(Buffer.from(first.split('.')[1]!, 'base64url').toString()).sub,
      scope: 'read:accounts',
    });
  });

  it('attack: an authorization code forged in Redis (sealed or not) for a consent bob never gave is refused', async () => {
    const verifier = 'v'.repeat(43);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const redirectUri = app.redirectUri;
    for (const store of [p.store, withSealKey]) {
      const code = randomUUID().replace(/-/g, '') + randomUUID().replace(/-/g, '');
      const record = {
        grant: { id: randomUUID(), userId: bobId, appId: app.appId, clientId: app.clientId, scope: ['read:banking'] },
        redirectUri,
        codeChallenge: challenge,
        expiresAt: Date.now() + 60_000,
      };
      await store.set(`oauth-code:${digest(code)}`, JSON.stringify(record), 60);
      const res = await tokenRequest(`${p.urls.api}/oauth/token`, {
        grant_type: 'AUTH_CODE',
        code,
        redirect_uri: redirectUri,
        code_verifier: verifier,
        client_id: app.clientId,
        client_secret: app.clientSecret,
      });
      expect(res).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    }
  });

  it('attack: a dashboard session forged in Redis for a cookie of the attacker’s choosing signs nobody in', async () => {
    const cookie = randomUUID().replace(/-/g, '') + randomUUID().replace(/-/g, '');
    const session = { userId: aliceId, email: alice.email, csrf: 'x'.repeat(43), createdAt: Date.now() };
    await p.store.set(`browser-session:${digest(cookie)}`, JSON.stringify(session), 600);
    const page = await fetch(`${p.urls.login}/en/developer`, { redirect: 'manual', headers: { cookie: `tapi_session=${cookie}` } });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toContain('signin');
    // And no PAT can be minted with it.
    const mint = await fetch(`${p.urls.login}/en/developer/tokens`, {
      method: 'POST',
      redirect: 'manual',
      body: `_csrf=${session.csrf}&name=stolen&scope=READ_WRITE`,
      headers: { cookie: `tapi_session=${cookie}`, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(mint.status).toBe(303);
    expect(mint.headers.get('location')).toContain('signin');
    const [{ count }] = await p.auth.dataSource.query("SELECT count(*)::int AS count FROM personal_access_tokens WHERE name = 'stolen'");
    expect(count).toBe(0);
  });
});
