import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { http } from '@trading/testing';
import { newUser, patLogin, utcDate } from '../support/pat-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

/** Debian's chromium (tools/ci/provision.sh installs it); never a downloaded browser build. */
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * The developer dashboard in a real headless Chromium, end to end: sign in, create a token,
 * copy it, use it over the API, revoke it in the page, see the next call fail and the activity.
 */
describe('PAT dashboard in a browser', () => {
  let p: TestPlatform;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Anything the page's Content-Security-Policy refused (inline code would show here). */
  const cspViolations: string[] = [];

  beforeAll(async () => {
    p = await startTestPlatform();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
    context = await browser.newContext();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: p.urls.login });
    page = await context.newPage();
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await p?.stop();
  });

  it('signs in, creates and copies a token, uses it, revokes it, and shows the activity', async () => {
    const user = await newUser(p);

    // Signed out, the dashboard sends the visitor to sign in and back.
    await page.goto(`${p.urls.login}/en/developer`);
    expect(new URL(page.url()).pathname).toBe('/en/signin');
    await page.fill('#email', user.email);
    await page.fill('#password', 'not-the-password');
    await page.click('button[type=submit]');
    await expect(page.textContent('#signin-error')).resolves.toContain('The e-mail or password is wrong.');
    await page.fill('#password', user.password);
    await Promise.all([page.waitForURL(/\/en\/developer$/), page.click('button[type=submit]')]);

    // The page validates before sending, in sentences beside each field.
    await page.fill('#name', '   ');
    await page.fill('#ips', '10.0.0.1, not-an-ip');
    await page.click('#create-token button[type=submit]');
    await expect(page.textContent('[data-error-for=name]')).resolves.toBe('Give the token a name.');
    await expect(page.textContent('[data-error-for=ips]')).resolves.toContain('"not-an-ip" is not an IP address or address range');
    expect(new URL(page.url()).pathname).toBe('/en/developer'); // nothing was submitted

    await page.fill('#name', 'browser script');
    await page.fill('#expires', utcDate(30));
    await page.check('#scope-ro');
    await page.fill('#ips', '127.0.0.1, ::1, 2001:db8::/32');
    // Post/redirect/get: the token is shown on the dashboard's own address.
    await Promise.all([page.waitForSelector('#new-token-panel'), page.click('#create-token button[type=submit]')]);
    expect(new URL(page.url()).pathname).toBe('/en/developer');
    await expect(page.textContent('#new-token-panel')).resolves.toContain('shown only this once');

    // Copy it with the button, read it back from the clipboard.
    await page.click('#copy-token');
    // The clipboard write is asynchronous: wait for the page to say it finished.
    await page.waitForSelector('#copy-token[data-copied=true]');
    await expect(page.textContent('#copy-token')).resolves.toBe('Copied');
    const shown = await page.inputValue('#new-token');
    const copied = (await page.evaluate('navigator.clipboard.readText()')) as string;
    expect(copied).toBe(shown);
    expect(copied).toMatch(/^tpat_[0-9A-Za-z]{16}\.[0-9A-Za-z]{38}$/);
    const tokenId = copied.split('.')[0]!;

    // Use it over the API, as a script would.
    const login = await patLogin(p.urls.api, copied, { 'user-agent': 'browser-e2e-script/1.0' });
    expect(login.status).toBe(200);
    expect((await http('GET', `${p.urls.api}/accounts`, { token: login.body.token })).status).toBe(200);

    // The list shows it, used, from where; revoke it there.
    await page.goto(`${p.urls.login}/en/developer`);
    const row = page.locator(`tr[data-token-id="${tokenId}"]`);
    await expect(row.textContent()).resolves.toMatch(
      /browser script[\s\S]*READ_ONLY[\s\S]*127\.0\.0\.1, ::1, 2001:db8::\/32[\s\S]*127\.0\.0\.1[\s\S]*Active/,
    );
    page.once('dialog', (dialog) => void dialog.accept());
    // Post/redirect/get: the notice comes from the server, not the URL, which is the dashboard's own.
    await Promise.all([page.waitForSelector('#notice'), row.locator('button', { hasText: 'Revoke' }).click()]);
    await expect(page.textContent('#notice')).resolves.toContain(`Token ${tokenId} is revoked`);
    expect(new URL(page.url()).search).toBe('');
    await expect(row.textContent()).resolves.toContain('Revoked');

    // The session made from it fails on its next call; the token cannot log in again.
    const after = await http('GET', `${p.urls.api}/accounts`, { token: login.body.token });
    expect(after.status).toBe(401);
    expect((await patLogin(p.urls.api, copied, { 'user-agent': 'browser-e2e-script/1.0' })).status).toBe(401);

    // The activity lists both logins, newest (the refused one) first.
    await page.reload();
    await expect(page.locator('#notice').count()).resolves.toBe(0); // shown once
    const activity = await page.locator('#activity tbody tr').allTextContents();
    expect(activity.length).toBeGreaterThanOrEqual(2);
    expect(activity[0]).toMatch(new RegExp(`browser script[\\s\\S]*${tokenId}[\\s\\S]*browser-e2e-script/1\\.0[\\s\\S]*Failed`));
    expect(activity[1]).toMatch(/browser-e2e-script\/1\.0[\s\S]*Success/);

    expect(cspViolations).toEqual([]);
  });

  it('speaks the page language and fits a phone: each token is a card of labelled lines, nothing scrolls sideways', async () => {
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 375, height: 740 });
    await phone.goto(`${p.urls.login}/de/developer`);
    await expect(phone.textContent('h1')).resolves.toBe('Persönliche Zugriffstoken');
    await expect(phone.textContent('#tokens tbody tr')).resolves.toContain('Gesperrt');
    const fits = await phone.evaluate('document.documentElement.scrollWidth <= window.innerWidth');
    expect(fits).toBe(true);
    const label = await phone.evaluate("getComputedStyle(document.querySelector('#tokens td[data-label]'), '::before').content");
    expect(label).toBe('"Name"');
    await phone.goto(`${p.urls.login}/fr/developer`);
    await expect(phone.textContent('h1')).resolves.toBe("Jetons d'accès personnels");
    // A wide screen keeps the table, with its header row.
    await phone.setViewportSize({ width: 1280, height: 800 });
    await expect(phone.isVisible('#tokens thead th')).resolves.toBe(true);
    await phone.close();
  });

  it('cannot be framed by another site', async () => {
    const framing = await context.newPage();
    // The control: a response without the page headers (/healthz) does load in a frame.
    await framing.setContent(`<iframe src="${p.urls.login}/healthz"></iframe><iframe src="${p.urls.login}/en/signin"></iframe>`);
    await framing.waitForTimeout(500);
    const health = framing.frames().find((f) => f.url().endsWith('/healthz'));
    await expect(health?.textContent('body')).resolves.toContain('"status":"ok"');
    // Chromium refuses to render the sign-in page inside it: no form ever appears.
    const signIn = framing.frames().find((f) => f.url().includes('/en/signin'));
    expect(signIn ? await signIn.locator('#email').count() : 0).toBe(0);
    await framing.close();
  });
});
