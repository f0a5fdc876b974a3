import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { freePort, http } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS, DEMO_VENDOR_APP, type DemoCredentials, prepareDemo } from '@trading/platform';
import { fitsWidth, launchChromium } from '../support/browser-pages';
import { newUser, sessionToken } from '../support/pat-helpers';
import { startSampleVendor } from '../support/sample-vendor-process';
import { inDays, startTestPlatform, type TestPlatform } from '../support/test-platform';

const alice = DEMO_USERS[0]!;
const LOCALES = ['en', 'de', 'fr'] as const;
const WIDTHS = [1280, 390] as const;
const BROWSER_LANGUAGE = { en: 'en-US', de: 'de-DE', fr: 'fr-FR' } as const;
/** The one way the sample vendor writes a time. */
const UTC_TIME = /\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/;
/** The dashboard's heading for the apps a person allowed, which the consent page must name the same. */
const APPS_SECTION: Record<string, string> = { en: 'Authorised apps', de: 'Autorisierte Apps', fr: 'Applications autorisées' };

/**
 * What a newcomer meets after `npm start`, in Chromium at a laptop's and a phone's width and in
 * each language: the sample vendor with the demo app (its bracket-order form works, a filled
 * market order shows its average price, one time format, the sign-in in the browser's
 * language), the dashboard (an app listed once, distinct words for a button and a status), the
 * consent page naming the dashboard's section as the dashboard does, the reset form promising
 * only what saving will do, the facade's errors as a page for a browser, and the market clock.
 */
describe('the newcomer pages', () => {
  let p: TestPlatform;
  let browser: Browser;
  let demo: DemoCredentials;
  let vendorUrl: string;
  let openidVendorUrl: string;
  let api: string;
  const vendors: ChildProcess[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'newcomer-pages-'));

  beforeAll(async () => {
    const [facadePort, authPort, vendorPort, openidVendorPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    p = await startTestPlatform({ FACADE_PORT: String(facadePort), AUTH_PORT: String(authPort), PLATFORM_DATA_DIR: dataDir });
    api = `http://localhost:${facadePort}/v1`;
    // A data directory from before the demo app placed orders: its app approved for reading only.
    await p.auth.registry.ensureDemoApp(
      { ...DEMO_VENDOR_APP.registration, scopes: ['read:accounts', 'read:banking', 'read:orders'] },
      { clientId: DEMO_VENDOR_APP.clientId, clientSecret: `tcs_${randomUUID()}` },
    );
    demo = JSON.parse(readFileSync(await prepareDemo(p, p.config), 'utf8')) as DemoCredentials;
    vendorUrl = `http://127.0.0.1:${vendorPort}`;
    openidVendorUrl = `http://127.0.0.1:${openidVendorPort}`;
    // The vendors listen on free ports here, not 3000: their callbacks join the demo app's DEV redirect URIs.
    await p.auth.registry.addDevRedirectUris(DEMO_VENDOR_APP.clientId, [`${vendorUrl}/callback`, `${openidVendorUrl}/callback`]);
    const env = (port: number, url: string) => ({
      SAMPLE_VENDOR_PORT: String(port),
      SAMPLE_VENDOR_CLIENT_SECRET: demo.clientSecret,
      SAMPLE_VENDOR_REDIRECT_URI: `${url}/callback`,
      SAMPLE_VENDOR_LOGIN_URL: p.urls.login,
      SAMPLE_VENDOR_API_URL: api,
      SAMPLE_VENDOR_LIVE_INTERVAL_MS: '300',
      PLATFORM_DATA_DIR: dataDir,
    });
    // As `npm run sample-vendor` runs it: the demo app, its default scopes and no language set.
    vendors.push((await startSampleVendor({ ...env(vendorPort, vendorUrl), SAMPLE_VENDOR_SCOPES: '', SAMPLE_VENDOR_LOCALE: '' })).child);
    // The same app connected once more, for other scopes: the dashboard still lists it once.
    vendors.push(
      (await startSampleVendor({ ...env(openidVendorPort, openidVendorUrl), SAMPLE_VENDOR_SCOPES: 'openid read:accounts' })).child,
    );
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    for (const v of vendors) v.kill();
    await p?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function open(locale: (typeof LOCALES)[number], width: number): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 900 }, locale: BROWSER_LANGUAGE[locale] });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    return page;
  }

  /** From the vendor's connect link through sign-in and consent back to its dashboard; checks the pages on the way. */
  async function connect(page: Page, locale: string, url = vendorUrl): Promise<string> {
    await page.goto(`${url}/`);
    await Promise.all([page.waitForURL(new RegExp(`/${locale}/signin\\?next=`)), page.click('#connect')]);
    const loginOrigin = new URL(page.url()).origin;
    await page.fill('#email', alice.email);
    await page.fill('#password', alice.password);
    await Promise.all([page.waitForURL(new RegExp(`/${locale}/login\\?`)), page.click('button[type=submit]')]);
    // The consent page names the list the way the dashboard heads it.
    await expect(page.textContent('#consent')).resolves.toContain(`${APPS_SECTION[locale]}`);
    expect(await fitsWidth(page)).toBe(true);
    await Promise.all([page.waitForURL(`${url}/accounts`), page.click('#allow')]);
    return loginOrigin;
  }

  it('the demo app places a bracket order, a filled market order shows its average price, and every time reads one way', async () => {
    expect((await p.auth.registry.findClient(DEMO_VENDOR_APP.clientId, 'DEV'))!.app.approvedScopes).toContain('write:orders');
    const session = await sessionToken(api, demo.pat);
    const accountId = DEMO_ACCOUNTS[1]!.id;
    const placed = await http('POST', `${api}/oms/order`, {
      token: session,
      headers: { 'idempotency-key': randomUUID() },
      body: { accountId, symbol: 'AAPL', side: 'BUY', type: 'MARKET', timeInForce: 'DAY', quantity: '1' },
    });
    expect(placed.status).toBe(201);
    let order = placed.body;
    for (let i = 0; i < 100 && order.status !== 'FILLED'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      order = (await http('GET', `${api}/oms/${accountId}/order/${order.id}`, { token: session })).body;
    }
    expect([order.status, order.averageFillPrice]).toEqual(['FILLED', expect.stringMatching(/^\d+\.\d+$/)]);

    for (const width of WIDTHS) {
      const page = await open('en', width);
      await connect(page, 'en');
      await page.goto(`${vendorUrl}/accounts?account=${accountId}`);
      // A market order has no price of its own; what it filled at has its own column.
      const row = `#orders tr[data-order="${order.id}"]`;
      await expect(page.textContent(`${row} td[data-label="Price"]`)).resolves.toBe('market');
      await expect(page.textContent(`${row} td[data-label="Filled at"]`)).resolves.toBe(order.averageFillPrice);
      // The form is there for the demo app, and the order goes through.
      await page.waitForSelector('#order-form');
      await Promise.all([page.waitForSelector('#notice'), page.click('#place-order')]);
      await expect(page.textContent('#notice')).resolves.toMatch(/^Bracket order \S+ placed/);
      await expect(page.textContent('#refreshes')).resolves.toMatch(new RegExp(`valid until ${UTC_TIME.source}\\.$`));
      for (let i = 0; i < 50 && !/updated/.test((await page.textContent('#live-status')) ?? ''); i++) await page.waitForTimeout(100);
      await expect(page.textContent('#live-status')).resolves.toMatch(new RegExp(`^Live · updated ${UTC_TIME.source}$`));
      const text = (await page.textContent('main'))!;
      expect(text).not.toMatch(/\d:\d\d(:\d\d)?\s?[AP]M/);
      expect(text).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:/);
      expect(await fitsWidth(page)).toBe(true);
      await page.context().close();
    }
  }, 120_000);

  it("signs in in the browser's language, lists the app once with its scopes merged, and never uses one word for a button and a status", async () => {
    // A token revoked and one active: the table shows a status beside a revoke button.
    const aliceId = (await p.auth.users.findByEmail(alice.email))!.id;
    const spent = await p.auth.pats.create({ userId: aliceId, name: 'spent', access: 'READ_ONLY', expires: inDays(5) });
    await p.auth.pats.revoke(aliceId, spent.pat.id);
    const openid = await open('en', 1280);
    await connect(openid, 'en', openidVendorUrl);
    await openid.context().close();

    for (const locale of LOCALES)
      for (const width of WIDTHS) {
        const page = await open(locale, width);
        const login = await connect(page, locale);
        await page.goto(`${login}/${locale}/developer`);
        await expect(page.textContent('#authorised-apps h2')).resolves.toBe(APPS_SECTION[locale]);
        const rows = await page.$$eval('#apps tbody tr', (trs) => trs.map((tr) => tr.textContent ?? ''));
        expect(rows).toHaveLength(1);
        for (const scope of ['openid', 'read:accounts', 'write:orders']) expect(rows[0]).toContain(scope);
        const statuses = await page.$$eval('#tokens td[data-status]', (tds) => tds.map((td) => td.textContent!.trim()));
        const buttons = await page.$$eval('#tokens button.danger, #apps button.danger', (bs) => bs.map((b) => b.textContent!.trim()));
        expect(statuses.length).toBeGreaterThan(1);
        expect(buttons.length).toBeGreaterThan(1);
        for (const word of buttons) expect(statuses).not.toContain(word);
        expect(await fitsWidth(page)).toBe(true);
        await page.context().close();
      }
  }, 240_000);

  it('the reset form says what saving will do, not what has been done', async () => {
    const user = await newUser(p);
    const mailLog = join(dataDir, 'mail.log');
    const page = await open('en', 1280);
    await page.goto(`${p.urls.login}/en/forgot-password`);
    await page.fill('#email', user.email);
    await Promise.all([page.waitForSelector('#reset-sent'), page.click('#forgot-form button[type=submit]')]);
    await page.context().close();
    await p.auth.mail.runOnce();
    const token = new RegExp(`To: ${user.email.replace(/[.+]/g, '\\$&')}\\n[\\s\\S]*?reset-password\\?token=([A-Za-z0-9_-]{43})`).exec(
      readFileSync(mailLog, 'utf8'),
    )![1]!;
    const before = {
      en: /^When you save the new password, /,
      de: /^Sobald Sie das neue Passwort speichern, /,
      fr: /^Lorsque vous enregistrerez /,
    };
    const done = /has been|have been|was signed out|were signed out|wurden abgemeldet|ont été déconnectés/;
    for (const locale of LOCALES)
      for (const width of WIDTHS) {
        const form = await open(locale, width);
        await form.goto(`${p.urls.login}/${locale}/reset-password?token=${token}`);
        await form.waitForSelector('#reset-form');
        await expect(form.textContent('#reset > p.hint')).resolves.toMatch(before[locale]);
        expect(await form.textContent('#reset')).not.toMatch(done);
        expect(await fitsWidth(form)).toBe(true);
        await form.context().close();
      }
  }, 120_000);

  it("answers a browser's error at the facade with a page in its language and the pages' headers; programs keep problem+json", async () => {
    for (const locale of LOCALES)
      for (const width of WIDTHS) {
        const page = await open(locale, width);
        for (const [path, status] of [
          ['/v1/no-such-thing', 404],
          ['/v1/accounts', 401],
        ] as const) {
          const answer = (await page.goto(`${api.replace(/\/v1$/, '')}${path}`))!;
          expect(answer.status()).toBe(status);
          const headers = answer.headers();
          expect(headers['content-type']).toMatch(/^text\/html/);
          expect(headers['content-security-policy']).toContain("default-src 'none'");
          expect([headers['x-frame-options'], headers['cache-control']]).toEqual(['DENY', 'no-store']);
          await expect(page.getAttribute('html', 'lang')).resolves.toBe(locale);
          await expect(page.getAttribute('#problem-page', 'data-status')).resolves.toBe(String(status));
          // The shared stylesheet loaded from the facade itself: the card is white on the grey page.
          await expect(page.evaluate(`getComputedStyle(document.getElementById('problem-page')).backgroundColor`)).resolves.toBe(
            'rgb(255, 255, 255)',
          );
          expect(await fitsWidth(page)).toBe(true);
        }
        await page.context().close();
      }
    for (const accept of ['application/json', '*/*', 'application/problem+json']) {
      const res = await http('GET', `${api}/no-such-thing`, { headers: { accept } });
      expect([res.status, res.headers.get('content-type'), res.body.code]).toEqual([
        404,
        'application/problem+json; charset=utf-8',
        'NOT_FOUND',
      ]);
    }
    const unauthorised = await http('GET', `${api}/accounts`, { headers: { accept: 'text/html' } });
    expect(unauthorised.headers.get('www-authenticate')).toMatch(/^Bearer/);
  }, 120_000);

  it('tells distinct, correct next open and close times for the always-open market', async () => {
    const session = await sessionToken(api, demo.pat);
    const clock = (await http('GET', `${api}/market/clock`, { token: session })).body;
    const now = Date.parse(clock.timestamp);
    const midnight = new Date(now);
    midnight.setUTCHours(24, 0, 0, 0);
    expect(clock.isOpen).toBe(true);
    expect(clock.nextClose).toBe(midnight.toISOString());
    expect(clock.nextOpen).toBe(clock.timestamp);
    expect(clock.nextOpen).not.toBe(clock.nextClose);
  });
});
