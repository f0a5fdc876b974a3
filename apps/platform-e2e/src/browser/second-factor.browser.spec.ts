import type { Browser, Page } from 'playwright-core';
import { codeAt } from '../support/authenticator';
import { newUser } from '../support/pat-helpers';
import { launchChromium, screenshot } from '../support/browser-pages';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

/**
 * An authenticator app in a real headless Chromium: set up in the dashboard's "Security" section
 * (QR code and key on the page, a first code, ten recovery codes), then asked for at sign-in after
 * the password; a recovery code works once.
 */
describe('authenticator app in a browser', () => {
  let p: TestPlatform;
  let browser: Browser;
  const cspViolations: string[] = [];

  async function newPage(): Promise<Page> {
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(8000);
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
    return page;
  }
  async function signInWithPassword(page: Page, user: { email: string; password: string }) {
    await page.goto(`${p.urls.login}/en/signin`);
    await page.fill('#email', user.email);
    await page.fill('#password', user.password);
    await page.click('#signin form button[type=submit]');
  }
  async function signOut(page: Page) {
    await Promise.all([page.waitForURL(/\/en\/signin$/), page.click('header form.signout button')]);
  }
  async function secondStep(page: Page, code: string) {
    await page.fill('#code', code);
    await page.click('#second-step-form button[type=submit]');
  }

  beforeAll(async () => {
    p = await startTestPlatform();
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await p?.stop();
  });

  it('sets up an authenticator app, then signs in with password and code, and with a recovery code once', async () => {
    const user = await newUser(p);
    const page = await newPage();
    await signInWithPassword(page, user);
    await page.waitForURL(/\/en\/developer$/);

    // Security: nothing set up yet.
    await expect(page.textContent('#security h2')).resolves.toBe('Security');
    await expect(page.textContent('#no-second-factor')).resolves.toContain('No authenticator app is set up.');
    await Promise.all([page.waitForURL(/\/en\/developer\/security\/totp$/), page.click('#setup-totp button')]);

    // The secret as a QR code (inline SVG, drawn) and as text grouped in fours.
    const qr = await page.locator('#totp-qr svg').boundingBox();
    expect(qr!.width).toBeGreaterThanOrEqual(150);
    const shown = (await page.textContent('#totp-secret'))!;
    expect(shown).toMatch(/^([A-Z2-7]{4} ){7}[A-Z2-7]{4}$/);
    const secret = shown.replace(/ /g, '');
    await screenshot(page, 'second-factor-setup');

    // A wrong first code is refused; the right one shows ten recovery codes.
    const current = await Promise.all([-30, 0, 30].map((d) => codeAt(secret, Math.floor(Date.now() / 1000) + d)));
    await page.fill('#code', ['000000', '111111', '222222', '333333'].find((c) => !current.includes(c))!);
    await page.click('#confirm-totp button[type=submit]');
    await expect(page.textContent('#totp-error')).resolves.toContain('That code is not right.');
    const now = Math.floor(Date.now() / 1000);
    await page.fill('#code', await codeAt(secret, now));
    await page.click('#confirm-totp button[type=submit]');
    const codes = await page.locator('#recovery-codes li code').allTextContents();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    await expect(page.textContent('#recovery-codes-panel')).resolves.toContain('They are shown only this once');

    // Listed in the dashboard with when it was added.
    await page.click('#codes-done');
    await page.waitForURL(/\/en\/developer(#security)?$/);
    const row = page.locator('#second-factors tbody tr');
    await expect(row.count()).resolves.toBe(1);
    await expect(row.locator('td').first().textContent()).resolves.toBe('Authenticator app');
    await expect(row.locator('td').nth(1).textContent()).resolves.toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
    await expect(page.textContent('#recovery-left')).resolves.toContain('10 unused recovery code(s) left.');
    await signOut(page);

    // Password, then the second step: no dashboard until a fresh code (the step after the first code's).
    await signInWithPassword(page, user);
    await page.waitForURL(/\/en\/signin\/second-factor$/);
    await expect(page.textContent('#second-step-heading')).resolves.toBe('Two-step verification');
    await page.goto(`${p.urls.login}/en/developer`);
    expect(new URL(page.url()).pathname).toBe('/en/signin');
    await page.goto(`${p.urls.login}/en/signin/second-factor`);
    await secondStep(page, await codeAt(secret, (Math.floor(now / 30) + 1) * 30));
    await page.waitForURL(/\/en\/developer$/);
    await expect(page.textContent('header .who')).resolves.toBe(user.email);
    await signOut(page);

    // A recovery code in place of a code: once.
    await signInWithPassword(page, user);
    await page.waitForURL(/\/en\/signin\/second-factor$/);
    await secondStep(page, codes[0]!.toUpperCase());
    await page.waitForURL(/\/en\/developer$/);
    await expect(page.textContent('#recovery-left')).resolves.toContain('9 unused recovery code(s) left.');
    await signOut(page);
    await signInWithPassword(page, user);
    await page.waitForURL(/\/en\/signin\/second-factor$/);
    await secondStep(page, codes[0]!);
    await expect(page.textContent('#second-step-error')).resolves.toBe('That code is not right, or was already used.');
    expect(new URL(page.url()).pathname).toBe('/en/signin/second-factor');
    await screenshot(page, 'second-factor-step');

    // Another recovery code removes the app: sign-in asks for the password alone again.
    await secondStep(page, codes[1]!);
    await page.waitForURL(/\/en\/developer$/);
    await page.fill('#remove-code', codes[2]!);
    await page.click('#remove-factor button[type=submit]');
    await page.waitForURL(/\/en\/developer#security$/);
    await expect(page.textContent('#no-second-factor')).resolves.toContain('No authenticator app is set up.');
    await signOut(page);
    await signInWithPassword(page, user);
    await page.waitForURL(/\/en\/developer$/);

    expect(cspViolations).toEqual([]);
  }, 60_000);
});
