import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createLogger } from '@trading/logging';
import { MemoryStore } from '@trading/redis';
import { startOnTestDatabase, testKeys, type ServiceOnTestDatabase } from '@trading/testing';
import { createAuthApp, loadAuthConfig, type AuthApp } from '../app';
import { PasswordResets } from '../password-reset/password-reset.service';
import { purgeExpired } from '../retention';
import { SecurityLog, SECURITY_LOG_LIMIT, type NewSecurityEvent } from './security-log';

/** The security log over a real database: what is recorded, which events mail the user, the 90 days, the purge. */
describe('security log', () => {
  const keys = testKeys();
  let running: ServiceOnTestDatabase<AuthApp>;
  let log: SecurityLog;
  const ds = () => running.service.dataSource;

  beforeAll(async () => {
    running = await startOnTestDatabase('auth', (databaseUrl) =>
      createAuthApp(
        loadAuthConfig({
          ...keys.env('auth'),
          AUTH_DATABASE_URL: databaseUrl,
          AUTH_ADMIN_TOKEN: 'a'.repeat(32),
          MAIL_POLL_MS: '0',
          LOG_LEVEL: 'silent',
        }),
        { logger: createLogger('auth', 'silent'), store: new MemoryStore() },
      ),
    );
    log = new SecurityLog(ds(), 'https://login.example');
  });
  afterAll(() => running?.stop());

  const newUser = async () => {
    const email = `log-${randomUUID()}@example.com`;
    const user = await running.service.users.create({ email, password: 'a-long-enough-password', firstName: 'A', lastName: 'B' });
    return { id: user.id, email };
  };
  const mailsTo = (email: string): Promise<Array<{ subject: string; body: string; secret: string | null }>> =>
    ds().query('SELECT subject, body, secret FROM email_outbox WHERE to_address = $1 ORDER BY id', [email]);
  const signIn = (userId: string, address: string, locale = 'en') =>
    log.recordAfter({ userId, type: 'sign_in', context: { address, userAgent: '  curl/8.0  ', locale } });
  /** Moves every event of the user back by `days`. */
  const age = (userId: string, days: number) =>
    ds().query('UPDATE security_events SET occurred_at = occurred_at - make_interval(days => $2) WHERE user_id = $1', [userId, days]);

  it('mails a sign-in from a new address, not one from an address used in the last 90 days, and logs both', async () => {
    const user = await newUser();
    expect(await signIn(user.id, '203.0.113.7')).toBe(true);
    expect(await signIn(user.id, '203.0.113.7')).toBe(false);
    expect(await signIn(user.id, '198.51.100.9', 'de')).toBe(true);

    const mails = await mailsTo(user.email);
    expect(mails.map((m) => m.subject)).toEqual(['New sign-in to your Trading API account', 'Neue Anmeldung bei Ihrem Trading-API-Konto']);
    expect(mails[0]!.body).toContain('from 203.0.113.7 at ');
    expect(mails[0]!.body).toContain('https://login.example/en/forgot-password');
    expect(mails[1]!.body).toContain('von 198.51.100.9');

    const events = await log.listForUser(user.id);
    expect(events.map((e) => [e.type, e.address, e.userAgent])).toEqual([
      ['sign_in', '198.51.100.9', 'curl/8.0'],
      ['sign_in', '203.0.113.7', 'curl/8.0'],
      ['sign_in', '203.0.113.7', 'curl/8.0'],
    ]);
  });

  it('counts an address as known for 90 days only: a sign-in from it after that is mailed again', async () => {
    const user = await newUser();
    await signIn(user.id, '203.0.113.8');
    await age(user.id, 89);
    expect(await signIn(user.id, '203.0.113.8')).toBe(false);
    // Both sign-ins from it now lie beyond the 90 days.
    await age(user.id, 91);
    expect(await signIn(user.id, '203.0.113.8')).toBe(true);
    expect(await mailsTo(user.email)).toHaveLength(2);
  });

  it('lists only the last 90 days of the user, newest first and at most 100, and the purge deletes what is older', async () => {
    const user = await newUser();
    const other = await newUser();
    await log.recordAfter({ userId: other.id, type: 'app_disconnected', app: { clientId: 'c1', name: 'Other app' } });
    for (let i = 0; i < 3; i++) await signIn(user.id, `203.0.113.${i}`);
    await age(user.id, 91);
    await log.recordAfter({
      userId: user.id,
      type: 'app_connected',
      app: { clientId: 'cid-1', name: 'Charts' },
      detail: { scope: 'read:market' },
    });
    expect((await log.listForUser(user.id)).map((e) => [e.type, e.app, e.detail])).toEqual([
      ['app_connected', { clientId: 'cid-1', name: 'Charts' }, { scope: 'read:market' }],
    ]);
    expect((await log.listForUser(other.id)).map((e) => e.type)).toEqual(['app_disconnected']);

    const purged = await purgeExpired(ds(), { loginAttemptDays: 90 });
    expect(purged['securityEvents']).toBeGreaterThanOrEqual(3);
    const [{ n }] = await ds().query('SELECT count(*)::int AS n FROM security_events WHERE user_id = $1', [user.id]);
    expect(n).toBe(1);

    for (let i = 0; i < SECURITY_LOG_LIMIT + 5; i++) await signIn(other.id, '192.0.2.1');
    const listed = await log.listForUser(other.id);
    expect(listed).toHaveLength(SECURITY_LOG_LIMIT);
    expect(listed[0]!.occurredAt.getTime()).toBeGreaterThanOrEqual(listed[listed.length - 1]!.occurredAt.getTime());
    expect(listed.every((e) => e.type === 'sign_in')).toBe(true);
  });

  it('records PAT creation in its transaction and revocation once, mailing the name and id but never the token', async () => {
    const user = await newUser();
    const { token, pat } = await running.service.pats.create({
      userId: user.id,
      name: 'nightly <report>',
      access: 'READ_ONLY',
      expires: new Date(Date.now() + 5 * 86_400_000).toISOString().slice(0, 10),
      context: { address: '203.0.113.50', locale: 'fr' },
    });
    await running.service.pats.revoke(user.id, pat.id, new Date(), { address: '203.0.113.50' });
    await running.service.pats.revoke(user.id, pat.id);

    const events = await log.listForUser(user.id);
    expect(events.map((e) => [e.type, e.detail])).toEqual([
      ['pat_revoked', { tokenName: 'nightly <report>', tokenId: pat.id, scope: 'READ_ONLY' }],
      ['pat_created', { tokenName: 'nightly <report>', tokenId: pat.id, scope: 'READ_ONLY' }],
    ]);
    const mails = await mailsTo(user.email);
    expect(mails.map((m) => m.subject)).toEqual([
      'Un jeton d’accès personnel a été créé pour votre compte Trading API',
      'A personal access token of your Trading API account was revoked',
    ]);
    const secret = token.split('.')[1]!;
    for (const m of mails) {
      expect(m.body).toContain(pat.id);
      expect(m.body).not.toContain(secret);
      expect(m.secret).toBeNull();
    }
  });

  it('records nothing and mails nothing when the change fails with its transaction', async () => {
    const user = await newUser();
    const event: NewSecurityEvent = {
      userId: user.id,
      type: 'pat_created',
      detail: { tokenName: 'x', tokenId: 'tpat_x', scope: 'READ_ONLY' },
    };
    await expect(
      ds().transaction(async (tx) => {
        await log.record(tx, event);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await log.listForUser(user.id)).toEqual([]);
    expect(await mailsTo(user.email)).toEqual([]);
  });

  it('records a completed password reset in its transaction, its notice being the one "password was changed" mail', async () => {
    const user = await newUser();
    const resets = new PasswordResets(ds(), { ttlSeconds: 1800, publicUrl: 'https://login.example' }, undefined, log);
    const token = randomBytes(32).toString('base64url');
    await ds().query("INSERT INTO password_reset_tokens (token_hash, user_id, expires_at) VALUES ($1, $2, now() + interval '30 minutes')", [
      createHash('sha256').update(token).digest('hex'),
      user.id,
    ]);
    expect(await resets.complete(token, 'another-long-passphrase', 'de', true, { address: '203.0.113.90' })).toEqual({
      userId: user.id,
      email: user.email,
    });
    expect((await log.listForUser(user.id)).map((e) => [e.type, e.address, e.detail])).toEqual([
      ['password_reset', '203.0.113.90', { signedOutEverywhere: true }],
    ]);
    expect((await mailsTo(user.email)).map((m) => m.subject)).toEqual(['Ihr Trading-API-Passwort wurde geändert']);
  });
});
