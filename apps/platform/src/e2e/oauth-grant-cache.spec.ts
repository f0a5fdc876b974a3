import { Client } from 'pg';
import { withDatabaseName } from '@trading/db';
import { TEST_POSTGRES_URL } from '@trading/testing';
import { DEMO_USERS } from '../app';
import { extraAuth, provisionApp, refresh, tokenRequest, tokensFor, type ProvisionedApp } from './oauth-helpers';
import { startTestPlatform, type TestPlatform } from './test-platform';

const alice = { email: DEMO_USERS[0]!.email, password: DEMO_USERS[0]!.password };

/**
 * Issue 25: each auth instance remembers the grants its refreshes read (OAUTH_GRANT_CACHE_ENTRIES),
 * kept current by a trigger's notifications. Attacks on that memory: a grant revoked at one
 * instance, or changed by hand in the database, must stop refreshing at every other instance.
 */
describe('the grants an auth instance remembers', () => {
  let p: TestPlatform;
  let app: ProvisionedApp;
  let other: Awaited<ReturnType<typeof extraAuth>>;
  let db: Client;

  beforeAll(async () => {
    p = await startTestPlatform();
    app = await provisionApp(p, { scopes: ['read:accounts', 'read:banking'] });
    other = await extraAuth(p, {});
    db = new Client({ connectionString: withDatabaseName(TEST_POSTGRES_URL, `${p.config.PLATFORM_DB_PREFIX}auth`) });
    await db.connect();
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await other?.close();
    await p?.stop();
  });

  it('a grant revoked at one instance cannot be refreshed at another that has just read it', async () => {
    const tokens = await tokensFor(p, app, alice);
    // The other instance reads (and remembers) the grant.
    const first = await refresh(`${other.url}`, app, tokens.refresh_token);
    expect(first.status).toBe(200);
    const revoked = await tokenRequest(
      `${p.urls.api}/oauth/revoke`,
      { token: first.body.refresh_token, token_type_hint: 'refresh_token' },
      { form: true, basic: [app.clientId, app.clientSecret] },
    );
    expect(revoked.status).toBe(200);
    // At once, with no wait for the notification: the refresh checks the grant is live after its session exists.
    const again = await refresh(`${other.url}`, app, first.body.refresh_token);
    expect(again.body.error).toBe('invalid_grant');
  });

  it('a grant changed by hand in the database is read again by every instance (the trigger announces it)', async () => {
    const tokens = await tokensFor(p, app, alice, 'read:accounts read:banking');
    const first = await refresh(`${other.url}`, app, tokens.refresh_token);
    expect(first.body.scope).toBe('read:accounts read:banking');
    const [{ id }] = (await db.query('SELECT id FROM oauth_grants WHERE client_id = $1 ORDER BY created_at DESC LIMIT 1', [app.clientId]))
      .rows;
    // An operator narrows the grant: the refresh token's own record still names the wider scope, which no longer matches.
    await db.query("UPDATE oauth_grants SET scope = ARRAY['read:accounts'] WHERE id = $1", [id]);
    // The notification leaves at commit and reaches the other instance's listener within milliseconds: a moment for it.
    await new Promise((r) => setTimeout(r, 250));
    let answer = await refresh(`${other.url}`, app, first.body.refresh_token);
    expect(answer.body.error).toBe('invalid_grant');
    answer = await refresh(`${p.urls.api}`, app, first.body.refresh_token);
    expect(answer.body.error).toBe('invalid_grant');
  });

  it('a revocation the cache never heard of still stops the refresh after the swap: its session and retry answer do not survive', async () => {
    const tokens = await tokensFor(p, app, alice);
    const first = await refresh(`${other.url}`, app, tokens.refresh_token);
    expect(first.status).toBe(200);
    const [{ id }] = (await db.query('SELECT id FROM oauth_grants WHERE client_id = $1 ORDER BY created_at DESC LIMIT 1', [app.clientId]))
      .rows;
    // Revoked by hand with triggers off: no notification, so the other instance still remembers it live.
    await db.query('BEGIN');
    await db.query("SET LOCAL session_replication_role = 'replica'");
    await db.query("UPDATE oauth_grants SET revoked_at = now(), revoked_reason = 'USER' WHERE id = $1", [id]);
    await db.query('COMMIT');
    const refused = await refresh(`${other.url}`, app, first.body.refresh_token);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_grant');
    // The session the swap wrote was ended at once: of the three made under the grant (code, two
    // refreshes), only the two from before the silent revocation are still in Redis.
    const sids = await p.store.members(`grant-sessions:${id}`);
    expect(sids).toHaveLength(3);
    const live = (await Promise.all(sids.map((sid) => p.store.get(`session:${sid}`)))).filter(Boolean);
    expect(live).toHaveLength(2);
    // A retry of the same token within the window finds no answer to repeat.
    const retry = await refresh(`${other.url}`, app, first.body.refresh_token);
    expect(retry.status).toBe(400);
    expect(retry.body.access_token).toBeUndefined();
  });
});
