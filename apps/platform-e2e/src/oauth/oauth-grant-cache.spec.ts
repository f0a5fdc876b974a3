import { createHash } from 'node:crypto';
import { Client } from 'pg';
import { withDatabaseName } from '@trading/db';
import { TEST_POSTGRES_URL } from '@trading/testing';
import { DEMO_USERS } from '@trading/platform';
import { admin, extraAuth, provisionApp, refresh, tokenRequest, tokensFor, type ProvisionedApp } from '../support/oauth-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const alice = { email: DEMO_USERS[0]!.email, password: DEMO_USERS[0]!.password };

/**
 * Each auth instance remembers the grants its refreshes read (OAUTH_GRANT_CACHE_ENTRIES)
 * and the clients its token requests authenticate (OAUTH_CLIENT_CACHE_ENTRIES), kept current by
 * triggers' notifications. Attacks on that memory: a grant revoked at one instance, or changed by
 * hand in the database, must stop refreshing at every other instance; so must a client whose app
 * was suspended or whose secret changed.
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

  // The clients (OAUTH_CLIENT_CACHE_ENTRIES): triggers on the credentials and their apps announce
  // each change. A client whose app was suspended, or whose secret changed, by hand in the database
  // or at another instance, must stop working at every instance that remembers it.
  describe('and the clients it remembers', () => {
    /** The notification leaves at commit and reaches the other instance's listener within milliseconds: a moment for it. */
    const heard = () => new Promise((r) => setTimeout(r, 250));

    it('an app suspended by hand in the database is refused by an instance that remembered its client', async () => {
      const app = await provisionApp(p);
      const tokens = await tokensFor(p, app, alice);
      const first = await refresh(`${other.url}`, app, tokens.refresh_token);
      expect(first.status).toBe(200);
      // Only the app's row changes: its grants stay live, so only the client check can refuse.
      await db.query("UPDATE vendor_apps SET status = 'SUSPENDED', suspended_at = now() WHERE id = $1", [app.appId]);
      await heard();
      const refused = await refresh(`${other.url}`, app, first.body.refresh_token);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('unauthorized_client');
    });

    it('a secret changed by hand in the database: the old one is refused, the new one works, wherever the client was remembered', async () => {
      const app = await provisionApp(p);
      const tokens = await tokensFor(p, app, alice);
      const first = await refresh(`${other.url}`, app, tokens.refresh_token);
      expect(first.status).toBe(200);
      const secret = 'tcs_changed_by_hand_0123456789abcdef';
      await db.query('UPDATE vendor_app_credentials SET secret_hash = $2 WHERE client_id = $1', [
        app.clientId,
        createHash('sha256').update(secret).digest('hex'),
      ]);
      await heard();
      const old = await refresh(`${other.url}`, app, first.body.refresh_token);
      expect(old.status).toBe(401);
      expect(old.body.error).toBe('invalid_client');
      const fresh = await refresh(`${other.url}`, { ...app, clientSecret: secret }, first.body.refresh_token);
      expect(fresh.status).toBe(200);
    });

    it('a secret rotated through the admin API is refused at once by the instance that rotated it', async () => {
      const app = await provisionApp(p);
      const tokens = await tokensFor(p, app, alice);
      const first = await refresh(`${p.urls.api}`, app, tokens.refresh_token);
      expect(first.status).toBe(200);
      const rotated = await admin(p, 'POST', `/apps/${app.appId}/rotate-secret`, { environment: 'DEV' });
      expect(rotated.status).toBe(200);
      // No wait: this instance forgot its clients when its own write committed.
      const old = await refresh(`${p.urls.api}`, app, first.body.refresh_token);
      expect(old.body.error).toBe('invalid_client');
      const fresh = await refresh(`${p.urls.api}`, { ...app, clientSecret: rotated.body.clientSecret }, first.body.refresh_token);
      expect(fresh.status).toBe(200);
    });
  });
});
