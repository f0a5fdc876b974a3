import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@trading/logging';
import { MemoryStore } from '@trading/redis';
import { startOnTestDatabase, testKeys, type ServiceOnTestDatabase } from '@trading/testing';
import { createAuthApp, loadAuthConfig, type AuthApp } from '../app';
import { purgeExpired } from '../retention';
import { enqueueMail, SECRET_PLACEHOLDER } from './outbox';

/** Without SMTP (development), mail goes to a local file: never with a secret in it, and the outbox forgets the secret once sent. */
describe('mail outbox', () => {
  const keys = testKeys();
  const dir = mkdtempSync(join(tmpdir(), 'auth-mail-'));
  const file = join(dir, 'state', 'mail.log');
  let running: ServiceOnTestDatabase<AuthApp>;

  beforeAll(async () => {
    running = await startOnTestDatabase('auth', (databaseUrl) =>
      createAuthApp(
        loadAuthConfig({
          ...keys.env('auth'),
          AUTH_DATABASE_URL: databaseUrl,
          AUTH_ADMIN_TOKEN: 'a'.repeat(32),
          MAIL_LOG_FILE: file,
          MAIL_POLL_MS: '0',
          LOG_LEVEL: 'silent',
        }),
        { logger: createLogger('auth', 'silent'), store: new MemoryStore() },
      ),
    );
  });
  afterAll(async () => {
    await running?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes the mail to a file only its owner can read, with the secret withheld, and erases the secret from the outbox', async () => {
    const secret = 'tcs_THIS-IS-THE-CLIENT-SECRET-0123456789';
    const ds = running.service.dataSource;
    await enqueueMail(ds.manager, {
      to: 'vendor@example.com',
      subject: 'Your credentials',
      body: `client_secret: ${SECRET_PLACEHOLDER}`,
      secret,
    });
    expect(await running.service.mail.runOnce()).toBe(1);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('Your credentials');
    expect(text).toContain('withheld');
    expect(text).not.toContain(secret);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'state')).mode & 0o777).toBe(0o700);
    const [row] = await ds.query("SELECT secret, sent_at FROM email_outbox WHERE to_address = 'vendor@example.com'");
    expect(row.secret).toBeNull();
    expect(row.sent_at).not.toBeNull();
  });

  it('refuses to start outside DEV without SMTP_URL, naming it', async () => {
    await expect(
      createAuthApp(
        loadAuthConfig({ ...keys.env('auth'), AUTH_DATABASE_URL: running.databaseUrl, AUTH_ADMIN_TOKEN: 'a'.repeat(32), APP_ENV: 'PROD' }),
        {
          logger: createLogger('auth', 'silent'),
          store: new MemoryStore(),
        },
      ),
    ).rejects.toThrow(/SMTP_URL: is required when APP_ENV is PROD/);
  });

  it('purges what has outlived its use: old login attempts, delivered mail, consents never redeemed', async () => {
    const ds = running.service.dataSource;
    await ds.query(
      "INSERT INTO pat_login_attempts (at, token_id, outcome, reason) VALUES (now() - interval '100 days', 'tpat_old', 'FAILURE', 'UNKNOWN_TOKEN'), (now(), 'tpat_new', 'FAILURE', 'UNKNOWN_TOKEN')",
    );
    await ds.query("UPDATE email_outbox SET sent_at = now() - interval '31 days' WHERE to_address = 'vendor@example.com'");
    const purged = await purgeExpired(ds, { loginAttemptDays: 90 });
    expect(purged).toMatchObject({ loginAttempts: 1, sentMail: 1 });
    const left: Array<{ token_id: string }> = await ds.query(
      "SELECT token_id FROM pat_login_attempts WHERE token_id IN ('tpat_old', 'tpat_new')",
    );
    expect(left.map((r) => r.token_id)).toEqual(['tpat_new']);
  });
});
