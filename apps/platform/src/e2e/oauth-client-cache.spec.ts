import { createHash } from 'node:crypto';
import { Client } from 'pg';
import { withDatabaseName } from '@trading/db';
import { TEST_POSTGRES_URL } from '@trading/testing';
import { DEMO_USERS } from '../app';
import { admin, extraAuth, provisionApp, refresh, tokensFor } from './oauth-helpers';
import { startTestPlatform, type TestPlatform } from './test-platform';

const alice = { email: DEMO_USERS[0]!.email, password: DEMO_USERS[0]!.password };

/**
 * Issue 25: each auth instance remembers the clients its token requests authenticate
 * (OAUTH_CLIENT_CACHE_ENTRIES), kept current by triggers on the credentials and their apps.
 * Attacks on that memory: a client whose app was suspended, or whose secret changed, by hand in
 * the database or at another instance, must stop working at every instance that remembers it.
 */
describe('the clients an auth instance remembers', () => {
  let p: TestPlatform;
  let other: Awaited<ReturnType<typeof extraAuth>>;
  let db: Client;

  beforeAll(async () => {
    p = await startTestPlatform();
    other = await extraAuth(p, {});
    db = new Client({ connectionString: withDatabaseName(TEST_POSTGRES_URL, `${p.config.PLATFORM_DB_PREFIX}auth`) });
    await db.connect();
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await other?.close();
    await p?.stop();
  });

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
