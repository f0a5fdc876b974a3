import type { Browser, BrowserContext, Page } from 'playwright-core';
import { freePort } from '@trading/testing';
import { DEMO_USERS } from '@trading/platform';
import { fitsWidth, launchChromium, screenshot, WIDTHS } from '../support/browser-pages';
import { pkce, provisionApp, type ProvisionedApp } from '../support/oauth-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const alice = DEMO_USERS[0]!;

/**
 * In Chromium at a phone's and a laptop's width: the OAuth sign-in names the
 * app (badge or logo, publisher) under the broker's brand while the dashboard's stays generic;
 * the language switcher keeps the authorization request in flight and is remembered; a browser
 * gets a localised 404 page where an API client gets problem+json, whose `type` is a page here.
 */
describe('sign-in and error pages in a browser', () => {
  let p: TestPlatform;
  /** Auth's public address as configured (its issuer): /oauth/authorize leads there, cookies stay on it. */
  let base: string;
  let browser: Browser;
  let plain: ProvisionedApp;
  let withLogo: ProvisionedApp;
  const cspViolations: string[] = [];

  async function open(width: number, options: { locale?: string } = {}): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width, height: 800 }, locale: options.locale ?? 'en-GB' });
    const page = await context.newPage();
    // Well inside the test's own timeout, so a wait that fails says which one.
    page.setDefaultTimeout(8000);
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
    return { context, page };
  }

  const authorizeQuery = (app: ProvisionedApp) =>
    new URLSearchParams({
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: app.redirectUri,
      scope: 'read:accounts',
      state: 'state-28',
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    }).toString();

  beforeAll(async () => {
    const port = await freePort();
    p = await startTestPlatform({ AUTH_PORT: String(port) });
    base = `http://localhost:${port}`;
    // Registered with a plain-http logo on someone else's host: never shown (a badge instead).
    plain = await provisionApp(p, {
      appName: 'Zebra Ledger',
      companyName: 'Zebra Software GmbH',
      logoUrl: 'http://zebra.example/logo.png',
    });
    // An https logo is shown, at a fixed size, with its alt text (the host does not answer here: the alt text shows).
    withLogo = await provisionApp(p, { appName: 'Quay Charts', companyName: 'Quay Labs SAS', logoUrl: 'https://quay.invalid/logo.png' });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await p?.stop();
  });

  for (const width of WIDTHS) {
    it(`names the app on the OAuth sign-in and keeps the dashboard's generic (${width} px)`, async () => {
      const { context, page } = await open(width);
      await page.goto(`${base}/oauth/authorize?${authorizeQuery(plain)}`);
      await page.waitForURL(/\/en\/signin\?next=/);
      await expect(page.textContent('#signin-heading')).resolves.toBe('Sign in to continue to Zebra Ledger');
      await expect(page.textContent('#signin-publisher')).resolves.toBe('An app by Zebra Software GmbH');
      await expect(page.textContent('#signin-app-badge')).resolves.toBe('Z');
      expect(await page.locator('#signin-app-logo').count()).toBe(0);
      // The broker's brand, not "Developer".
      await expect(page.textContent('header .brand')).resolves.toBe('Trading API');
      await expect(page.title()).resolves.toBe('Sign in to continue to Zebra Ledger · Trading API');
      expect(await fitsWidth(page)).toBe(true);
      await screenshot(page, 'signin-oauth-badge');

      await page.goto(`${base}/oauth/authorize?${authorizeQuery(withLogo)}`);
      await page.waitForURL(/\/en\/signin\?next=/);
      await expect(page.textContent('#signin-heading')).resolves.toBe('Sign in to continue to Quay Charts');
      const logo = page.locator('#signin-app-logo');
      await expect(logo.getAttribute('src')).resolves.toBe('https://quay.invalid/logo.png');
      await expect(logo.getAttribute('alt')).resolves.toBe('Logo of Quay Charts');
      const box = await logo.boundingBox();
      expect([box?.width, box?.height]).toEqual([48, 48]);
      await screenshot(page, 'signin-oauth-logo');

      // The dashboard's own sign-in names no app.
      await page.goto(`${base}/en/developer`);
      await page.waitForURL(/\/en\/signin/);
      await expect(page.textContent('#signin-heading')).resolves.toBe('Sign in');
      expect(await page.locator('#signin-app').count()).toBe(0);
      expect(await fitsWidth(page)).toBe(true);
      await screenshot(page, 'signin-dashboard');
      await context.close();
    });
  }

  it('switches language on the same page, keeps the OAuth request in flight and remembers the choice', async () => {
    const { context, page } = await open(375);
    await page.goto(`${base}/oauth/authorize?${authorizeQuery(plain)}`);
    await page.waitForURL(/\/en\/signin\?next=/);
    const next = new URL(page.url()).searchParams.get('next');
    await Promise.all([page.waitForURL(/\/de\/signin\?next=/), page.click('#languages a[data-lang=de]')]);
    // The same authorization request, now in German too.
    expect(new URL(page.url()).searchParams.get('next')).toBe(next!.replace(/^\/en\//, '/de/'));
    await expect(page.textContent('#signin-heading')).resolves.toBe('Melden Sie sich an, um mit Zebra Ledger fortzufahren');
    await expect(page.getAttribute('html', 'lang')).resolves.toBe('de');
    await expect(page.textContent('#languages [aria-current]')).resolves.toBe('Deutsch');
    const cookie = (await context.cookies()).find((c) => c.name === 'lang');
    expect(cookie?.value).toBe('de');
    await screenshot(page, 'signin-de');

    // Signing in continues the same request, in German, to the consent page.
    await page.fill('#email', alice.email);
    await page.fill('#password', alice.password);
    await Promise.all([page.waitForURL(/\/de\/login\?/), page.click('form button[type=submit]')]);
    await expect(page.textContent('#consent-heading')).resolves.toBe('Zebra Ledger möchte auf Ihr Trading-API-Konto zugreifen');

    // The remembered choice beats the browser's Accept-Language (en-GB here) on the next request.
    await page.goto(`${base}/oauth/authorize?${authorizeQuery(plain)}`);
    await page.waitForURL(/\/de\/login\?/);

    // And back to English, still the same request.
    await Promise.all([page.waitForURL(/\/en\/login\?/), page.click('#languages a[data-lang=en]')]);
    await expect(page.textContent('#consent-heading')).resolves.toBe('Zebra Ledger wants to access your Trading API account');
    await context.close();
  });

  it('follows Accept-Language when no language was chosen', async () => {
    const { context, page } = await open(1280, { locale: 'fr-FR' });
    await page.goto(`${base}/oauth/authorize?${authorizeQuery(plain)}`);
    await page.waitForURL(/\/fr\/signin\?next=/);
    await expect(page.textContent('#signin-heading')).resolves.toBe('Connectez-vous pour continuer vers Zebra Ledger');
    await expect(page.textContent('#forgot-password')).resolves.toBe('Mot de passe oublié ?');
    await context.close();
  });

  for (const width of WIDTHS) {
    it(`answers a browser with a localised 404 page and an API client with problem+json naming a page here (${width} px)`, async () => {
      const { context, page } = await open(width, { locale: 'fr-FR' });
      const res = await page.goto(`${base}/no/such/page`);
      expect(res?.status()).toBe(404);
      expect(res?.headers()['content-type']).toMatch(/^text\/html/);
      await expect(page.textContent('#error-title')).resolves.toBe('Page introuvable');
      await expect(page.getAttribute('html', 'lang')).resolves.toBe('fr');
      expect(await fitsWidth(page)).toBe(true);
      await screenshot(page, 'not-found-fr');
      // The switcher works here too (no locale in the path: the cookie decides).
      await Promise.all([page.waitForSelector('#error-title:has-text("Seite nicht gefunden")'), page.click('#languages a[data-lang=de]')]);
      await expect(page.textContent('#error-title')).resolves.toBe('Seite nicht gefunden');

      const api = await fetch(`${p.urls.login}/no/such/page`, { headers: { accept: 'application/json' } });
      expect(api.status).toBe(404);
      expect(api.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const problem = (await api.json()) as { type: string; code: string };
      expect(problem.type).toBe(`${base}/problems/not-found`);

      // The problem's type is a page the platform serves (here in German, the chosen language).
      const typePage = await page.goto(problem.type);
      expect(typePage?.status()).toBe(200);
      await expect(page.textContent('#problem-title')).resolves.toBe('Nicht gefunden');
      await expect(page.textContent('#problem code')).resolves.toBe('NOT_FOUND');
      // The API's own problems point at the same pages; /v1/problems/<code> leads there too.
      const unauthenticated = await fetch(`${p.urls.api}/accounts`);
      expect(((await unauthenticated.json()) as { type: string }).type).toBe(`${base}/problems/unauthenticated`);
      const viaApi = await fetch(`${p.urls.api}/problems/rate-limited`, { redirect: 'manual' });
      expect([viaApi.status, viaApi.headers.get('location')]).toEqual([302, `${base}/problems/rate-limited`]);
      await context.close();
    });
  }

  it('breaks no page policy', () => {
    expect(cspViolations).toEqual([]);
  });
});
