import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resetMailFloorKey } from '@trading/auth-service';
import type { QueryRunner } from 'typeorm';
import { RedisStore } from '@trading/redis';
import { CookieBrowser, http } from '@trading/testing';
import { extraAuth, provisionApp, refresh, tokensFor, type ProvisionedApp } from '../support/oauth-helpers';
import { newUser, patLogin, sessionToken } from '../support/pat-helpers';
import { inDays, startTestPlatform, type TestPlatform } from '../support/test-platform';

const RESET_SUBJECT = 'Choose a new password for your Trading API account';
/** Mails per account over all addresses, lowered so a test can spend it. */
const PER_ACCOUNT = 5;

/**
 * "Forgot password?" under attack, over HTTP. Auth runs behind a trusted proxy (loopback), so each
 * visitor's X-Forwarded-For is its address. A stranger asking for someone's address spends only
 * the stranger's budget; however the budgets are spent, the owner gets a link within the floor's
 * 15 minutes; the answer never waits on the account (its table locked, it still answers, the
 * same bytes as for an unknown address); and "sign out everywhere" ends every PAT and app grant.
 */
describe('password reset under attack', () => {
  let p: TestPlatform;
  let auth: Awaited<ReturnType<typeof extraAuth>>;
  let mailLog: string;
  let vendor: ProvisionedApp;

  const visitor = (address: string) => new CookieBrowser(auth.url, { 'x-forwarded-for': address });

  /** The forgot-password form, filled in and sent; the whole answer. */
  async function askForLink(from: CookieBrowser, email: string) {
    const form = await from.request('GET', '/en/forgot-password');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)![1]!;
    return from.request('POST', '/en/forgot-password', { _csrf: csrf, email });
  }

  const answeredWithin = <T>(ms: number, answer: Promise<T>) =>
    Promise.race([
      answer,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms: it waits on the account`)), ms)),
    ]);

  /** Waits until every recorded request and queued mail is handled (both auth instances deliver), then reads the mail log. */
  async function resetLinksTo(to: string): Promise<string[]> {
    for (let i = 0; ; i++) {
      await auth.app.mail.runOnce();
      const [{ waiting }] = await p.auth.dataSource.query(
        `SELECT (SELECT count(*) FROM password_reset_requests) + (SELECT count(*) FROM email_outbox WHERE sent_at IS NULL) AS waiting`,
      );
      if (Number(waiting) === 0) break;
      if (i > 200) throw new Error('reset requests were not handled');
      await new Promise((r) => setTimeout(r, 50));
    }
    let text = '';
    try {
      text = readFileSync(mailLog, 'utf8');
    } catch {
      return [];
    }
    return text
      .split(/^----- /m)
      .filter((m) => m.includes(`\nTo: ${to}\n`) && m.includes(`\nSubject: ${RESET_SUBJECT}\n`))
      .map((m) => /reset-password\?token=([A-Za-z0-9_-]{43})/.exec(m)![1]!);
  }

  /** The reset form for a mailed token, sent with a new password; `signOutEverywhere` as the checkbox was left. */
  async function resetWith(from: CookieBrowser, token: string, signOutEverywhere: boolean) {
    const page = await from.request('GET', `/en/reset-password?token=${token}`);
    expect(page.status).toBe(200);
    // Ticked by default.
    expect(page.body).toMatch(/<input type="checkbox" id="sign-out-everywhere" name="signOutEverywhere" value="yes"[^>]* checked>/);
    expect(page.body).toContain('Sign out everywhere and revoke all tokens');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const posted = await from.request('POST', '/en/reset-password', {
      _csrf: csrf,
      token,
      newPassword: 'a-brand-new-passphrase',
      confirmPassword: 'a-brand-new-passphrase',
      ...(signOutEverywhere ? { signOutEverywhere: 'yes' } : {}),
    });
    expect([posted.status, posted.location]).toEqual([303, '/en/signin?reset=done']);
  }

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'reset-abuse-'));
    p = await startTestPlatform({ PLATFORM_DATA_DIR: dataDir });
    mailLog = join(dataDir, 'mail.log');
    // A second auth instance behind a trusted proxy; both deliver into the one mail log.
    auth = await extraAuth(p, { AUTH_TRUST_PROXY: ['loopback'], MAIL_LOG_FILE: mailLog, PASSWORD_RESET_MAX_PER_ACCOUNT: PER_ACCOUNT });
    vendor = await provisionApp(p);
  }, 60_000);
  afterAll(async () => {
    await auth?.close();
    await p?.stop();
  });

  it("spends only the stranger's own budget when a stranger asks for someone's address: the owner still gets a link", async () => {
    const victim = await newUser(p);
    const stranger = visitor('203.0.113.10');
    for (let i = 0; i < 4; i++) expect((await askForLink(stranger, victim.email)).status).toBe(200);
    // The stranger's address has a budget of three mails for this account.
    expect(await resetLinksTo(victim.email)).toHaveLength(3);

    const owner = visitor('198.51.100.10');
    expect((await askForLink(owner, victim.email)).status).toBe(200);
    const links = await resetLinksTo(victim.email);
    expect(links).toHaveLength(4);
    expect((await owner.request('GET', `/en/reset-password?token=${links[3]}`)).status).toBe(200);
  });

  it('sends the owner a link within 15 minutes however the budgets were spent, and no more than that', async () => {
    const victim = await newUser(p);
    // The attacker shares the owner's address: it spends that address's budget for the account, then
    // the account's budget over all addresses from a second one.
    const shared = visitor('203.0.113.20');
    const elsewhere = visitor('203.0.113.21');
    for (let i = 0; i < 3; i++) await askForLink(shared, victim.email);
    for (let i = 0; i < PER_ACCOUNT - 3; i++) await askForLink(elsewhere, victim.email);
    expect(await resetLinksTo(victim.email)).toHaveLength(PER_ACCOUNT);

    // Every budget is spent and the last mail is fresh: the owner holds a live link, and gets no new one yet.
    const owner = visitor('203.0.113.20');
    expect((await askForLink(owner, victim.email)).status).toBe(200);
    expect(await resetLinksTo(victim.email)).toHaveLength(PER_ACCOUNT);

    // Fifteen minutes pass for the floor (its mark expires; the budgets' hour has not).
    const floor = resetMailFloorKey(`${p.config.PLATFORM_DB_PREFIX}auth`, victim.email);
    const redis = (p.store as RedisStore).client;
    const ttl = await redis.ttl(floor);
    expect(ttl).toBeGreaterThan(800);
    expect(ttl).toBeLessThanOrEqual(900);
    await redis.pExpire(floor, 1);
    await new Promise((r) => setTimeout(r, 10));

    expect((await askForLink(owner, victim.email)).status).toBe(200);
    const links = await resetLinksTo(victim.email);
    expect(links).toHaveLength(PER_ACCOUNT + 1);
    expect((await owner.request('GET', `/en/reset-password?token=${links.at(-1)}`)).status).toBe(200);
    // One per floor: the attacker's next request sends nothing.
    await askForLink(shared, victim.email);
    expect(await resetLinksTo(victim.email)).toHaveLength(PER_ACCOUNT + 1);
  });

  it('refuses to start with a floor longer than a link lives (the owner could be left with no live link)', async () => {
    await expect(extraAuth(p, { PASSWORD_RESET_FLOOR_SECONDS: 3600, PASSWORD_RESET_TTL_SECONDS: 1800 })).rejects.toThrow(
      /PASSWORD_RESET_FLOOR_SECONDS: must be at most PASSWORD_RESET_TTL_SECONDS \(1800\)/,
    );
  });

  it('answers without waiting on the account: the users table locked, the same bytes as for an unknown address, the mail after', async () => {
    const user = await newUser(p);
    const unknown = `pat-${randomUUID()}@example.com`; // as long as the user's address
    expect(unknown).toHaveLength(user.email.length);
    const from = visitor('203.0.113.30');
    const holder: QueryRunner = p.auth.dataSource.createQueryRunner();
    try {
      await holder.connect();
      await holder.startTransaction();
      // No reader or writer of the users table gets past this until the transaction ends.
      await holder.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      const forUser = await answeredWithin(5000, askForLink(from, user.email));
      const forUnknown = await answeredWithin(5000, askForLink(from, unknown));
      expect([forUser.status, forUnknown.status]).toEqual([200, 200]);
      expect(forUser.body.replaceAll(user.email, '…')).toBe(forUnknown.body.replaceAll(unknown, '…'));
      // Headers too, apart from the request's own id, its time and the body's hash.
      const headers = (h: Headers) => [...h].filter(([name]) => !['date', 'x-request-id', 'etag'].includes(name));
      expect(headers(forUser.headers)).toEqual(headers(forUnknown.headers));
      await holder.commitTransaction();
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
    }
    // Once the table is free, the link goes out to the account, and nothing to the unknown address.
    expect(await resetLinksTo(user.email)).toHaveLength(1);
    expect(await resetLinksTo(unknown)).toEqual([]);
  });

  /** A user with a PAT (and a session of it) and an app grant (access and refresh tokens), each working at the facade. */
  async function userWithEveryCredential() {
    const user = await newUser(p);
    const pat = await p.auth.pats.create({ userId: user.id, name: 'nightly', access: 'READ_ONLY', expires: inDays(5) });
    const patSession = await sessionToken(p.urls.api, pat.token);
    const app = await tokensFor(p, vendor, user);
    for (const token of [patSession, app.access_token]) expect((await http('GET', `${p.urls.api}/accounts`, { token })).status).toBe(200);
    return { user, pat: pat.token, patSession, app };
  }

  it('ends every PAT and app grant at the facade when "sign out everywhere" is ticked', async () => {
    const { user, pat, patSession, app } = await userWithEveryCredential();
    const from = visitor('203.0.113.40');
    await askForLink(from, user.email);
    const [token] = await resetLinksTo(user.email);
    await resetWith(from, token!, true);

    for (const bearer of [patSession, app.access_token])
      expect((await http('GET', `${p.urls.api}/accounts`, { token: bearer })).status).toBe(401);
    expect((await patLogin(p.urls.api, pat)).status).toBe(401);
    const refreshed = await refresh(p.urls.api, vendor, app.refresh_token);
    expect([refreshed.status, refreshed.body.error]).toEqual([400, 'invalid_grant']);
  });

  it('leaves PATs and app grants working when "sign out everywhere" is unticked', async () => {
    const { user, pat, patSession, app } = await userWithEveryCredential();
    const from = visitor('203.0.113.41');
    await askForLink(from, user.email);
    const [token] = await resetLinksTo(user.email);
    await resetWith(from, token!, false);

    for (const bearer of [patSession, app.access_token])
      expect((await http('GET', `${p.urls.api}/accounts`, { token: bearer })).status).toBe(200);
    expect((await patLogin(p.urls.api, pat)).status).toBe(200);
    expect((await refresh(p.urls.api, vendor, app.refresh_token)).status).toBe(200);
  });
});
