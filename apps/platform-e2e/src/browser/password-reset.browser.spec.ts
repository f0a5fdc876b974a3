import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { freePort } from '@trading/testing';
import { fitsWidth, launchChromium, screenshot, WIDTHS } from '../support/browser-pages';
import { newUser, patLogin } from '../support/pat-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

/**
 * Password reset in Chromium: "Forgot password?" → the same answer for any address → a mail in the
 * development mail log with a single-use link → a new password under the usual rule → every
 * browser session of the user ends; their PATs keep working when "sign out everywhere" (ticked by
 * default) is unticked; the limits never stop a sign-in.
 */
describe('password reset in a browser', () => {
  let p: TestPlatform;
  let base: string;
  let mailLog: string;
  let browser: Browser;

  async function open(width = 375): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width, height: 800 }, locale: 'en-GB' });
    const page = await context.newPage();
    page.setDefaultTimeout(8000);
    return { context, page };
  }

  /** Delivers the outbox now and returns the mails the log holds for `to`, oldest first. */
  async function mailsTo(to: string): Promise<Array<{ subject: string; body: string }>> {
    await p.auth.mail.runOnce();
    let text = '';
    try {
      text = readFileSync(mailLog, 'utf8');
    } catch {
      return [];
    }
    return text
      .split(/^----- /m)
      .filter((m) => m.includes(`\nTo: ${to}\n`))
      .map((m) => ({ subject: /\nSubject: (.*)\n/.exec(m)![1]!, body: m.slice(m.indexOf('\n\n') + 2) }));
  }

  async function askForLink(page: Page, email: string): Promise<string> {
    await page.goto(`${base}/en/signin`);
    await Promise.all([page.waitForURL(/\/en\/forgot-password$/), page.click('#forgot-password')]);
    await page.fill('#email', email);
    await Promise.all([page.waitForSelector('#reset-sent'), page.click('#forgot-form button[type=submit]')]);
    return (await page.textContent('#notice'))!;
  }

  beforeAll(async () => {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'reset-e2e-'));
    p = await startTestPlatform({ AUTH_PORT: String(port), PLATFORM_DATA_DIR: dataDir, MAIL_POLL_MS: '0' });
    base = `http://localhost:${port}`;
    mailLog = join(dataDir, 'mail.log');
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await p?.stop();
  });

  it('resets a password through the mailed link, ends the browser sessions and, unticked, leaves PATs alone', async () => {
    const user = await newUser(p, 'the-old-password-123');
    const pat = await p.auth.pats.create({
      userId: user.id,
      name: 'nightly',
      access: 'READ_ONLY',
      expires: new Date(Date.now() + 5 * 86400_000).toISOString().slice(0, 10),
    });

    // A browser that stays signed in (the user's laptop): it is signed out by the reset.
    const laptop = await open(1280);
    await laptop.page.goto(`${base}/en/signin`);
    await laptop.page.fill('#email', user.email);
    await laptop.page.fill('#password', user.password);
    await Promise.all([laptop.page.waitForURL(/\/en\/developer$/), laptop.page.click('form button[type=submit]')]);

    // The same answer whether or not the account exists; a mail only for the real one.
    const { context, page } = await open(375);
    const unknown = `nobody-${Date.now()}@example.com`;
    const forUnknown = await askForLink(page, unknown);
    const forUser = await askForLink(page, user.email);
    expect(forUser.replace(user.email, '…')).toBe(forUnknown.replace(unknown, '…'));
    expect(forUser).toContain('within 30 minutes');
    expect(await fitsWidth(page)).toBe(true);
    await screenshot(page, 'reset-sent');
    expect(await mailsTo(unknown)).toEqual([]);
    // The account's other mails (its security notices: the PAT created above) are not the reset's.
    const passwordMails = async () => (await mailsTo(user.email)).filter((m) => m.subject.includes('password'));
    const [mail] = await passwordMails();
    expect(mail!.subject).toBe('Choose a new password for your Trading API account');
    const link = /(http\S+\/en\/reset-password\?token=[A-Za-z0-9_-]{43})/.exec(mail!.body)![1]!;
    expect(link.startsWith(`${base}/`)).toBe(true);
    // Only a hash of the token is stored; the outbox no longer holds the link once delivered.
    const token = new URL(link).searchParams.get('token')!;
    const stored = await p.auth.dataSource.query('SELECT token_hash FROM password_reset_tokens');
    expect(JSON.stringify(stored)).not.toContain(token);
    const [outbox] = await p.auth.dataSource.query('SELECT secret, body FROM email_outbox WHERE to_address = $1 AND subject = $2', [
      user.email,
      mail!.subject,
    ]);
    expect([outbox.secret, outbox.body.includes(token)]).toEqual([null, false]);

    // The new password, under the usual rule: checked in the page first, then by the server.
    await page.goto(link);
    await page.fill('#new-password', 'short');
    await page.fill('#confirm-password', 'short');
    await page.click('#reset-form button[type=submit]');
    await expect(page.textContent('[data-error-for=newPassword]')).resolves.toBe('The password needs at least 12 characters.');
    await page.fill('#new-password', 'a-brand-new-passphrase');
    await page.fill('#confirm-password', 'a-brand-new-passphrase-typo');
    await page.click('#reset-form button[type=submit]');
    await expect(page.textContent('[data-error-for=confirmPassword]')).resolves.toBe('The two passwords are not the same.');
    expect(await fitsWidth(page)).toBe(true);
    await screenshot(page, 'reset-form');
    // "Sign out everywhere and revoke all tokens" is offered ticked; this user keeps their tokens.
    await expect(page.isChecked('#sign-out-everywhere')).resolves.toBe(true);
    await expect(page.textContent('label[for=sign-out-everywhere]')).resolves.toBe('Sign out everywhere and revoke all tokens');
    await page.uncheck('#sign-out-everywhere');
    await page.fill('#confirm-password', 'a-brand-new-passphrase');
    await Promise.all([page.waitForURL(/\/en\/signin\?reset=done$/), page.click('#reset-form button[type=submit]')]);
    await expect(page.textContent('#notice')).resolves.toBe('Your password has been changed. Sign in with your new password.');

    // The laptop's session is over; the PAT still logs in.
    await laptop.page.goto(`${base}/en/developer`);
    expect(new URL(laptop.page.url()).pathname).toBe('/en/signin');
    expect((await patLogin(p.urls.api, pat.token)).status).toBe(200);
    // The link was spent.
    await page.goto(link);
    await expect(page.textContent('#reset-invalid h1')).resolves.toBe('This link no longer works');
    // The old password no longer works; the new one does. A mail says the password changed.
    await page.goto(`${base}/en/signin`);
    await page.fill('#email', user.email);
    await page.fill('#password', user.password);
    await Promise.all([page.waitForSelector('#signin-error'), page.click('form button[type=submit]')]);
    await page.fill('#password', 'a-brand-new-passphrase');
    await Promise.all([page.waitForURL(/\/en\/developer$/), page.click('form button[type=submit]')]);
    expect((await passwordMails()).map((m) => m.subject)).toEqual([
      'Choose a new password for your Trading API account',
      'Your Trading API password was changed',
    ]);
    await context.close();
    await laptop.context.close();
  });

  it('refuses a made-up link and a short password on the server, in the page language', async () => {
    const { context, page } = await open(1280);
    await page.goto(`${base}/fr/reset-password?token=${'x'.repeat(43)}`);
    await expect(page.textContent('#reset-invalid h1')).resolves.toBe('Ce lien ne fonctionne plus');
    const user = await newUser(p);
    await page.goto(`${base}/fr/forgot-password`);
    await page.fill('#email', user.email);
    await Promise.all([page.waitForSelector('#reset-sent'), page.click('#forgot-form button[type=submit]')]);
    const [mail] = await mailsTo(user.email);
    expect(mail!.subject).toBe('Choisissez un nouveau mot de passe pour votre compte Trading API');
    const link = /(http\S+\/fr\/reset-password\?token=\S+)/.exec(mail!.body)![1]!;
    await page.goto(link);
    // Past the page's own check (a script-less browser, or a forged post): the server says the same.
    await page.fill('#new-password', 'short');
    await page.fill('#confirm-password', 'short');
    // The server's answer is a new page: wait for its error, not for the old page's load state.
    await Promise.all([
      page.waitForSelector('#error-newPassword:not(:empty)'),
      page.evaluate("document.getElementById('reset-form').submit()"),
    ]);
    await expect(page.textContent('#error-newPassword')).resolves.toBe('Le mot de passe doit compter au moins 12 caractères.');
    await expect(page.textContent('label[for=sign-out-everywhere]')).resolves.toBe('Se déconnecter partout et révoquer tous les jetons');
    await expect(page.isChecked('#sign-out-everywhere')).resolves.toBe(true);
    await context.close();
  });

  it('limits mails per account and address without ever stopping the account from signing in', async () => {
    const user = await newUser(p);
    const { context, page } = await open(375);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await askForLink(page, user.email));
    // Four requests, four identical answers, three mails (this address's budget for the account for the hour).
    expect(new Set(answers).size).toBe(1);
    expect(await mailsTo(user.email)).toHaveLength(3);
    await page.goto(`${base}/en/signin`);
    await page.fill('#email', user.email);
    await page.fill('#password', user.password);
    await Promise.all([page.waitForURL(/\/en\/developer$/), page.click('form button[type=submit]')]);
    await context.close();
  });

  for (const width of WIDTHS) {
    it(`fits the forgot-password page at ${width} px`, async () => {
      const { context, page } = await open(width);
      await page.goto(`${base}/de/forgot-password`);
      await expect(page.textContent('h1')).resolves.toBe('Passwort zurücksetzen');
      expect(await fitsWidth(page)).toBe(true);
      await screenshot(page, 'forgot-de');
      await context.close();
    });
  }
});
