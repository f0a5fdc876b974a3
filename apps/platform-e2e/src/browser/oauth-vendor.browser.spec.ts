import type { ChildProcess } from 'node:child_process';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { freePort } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { admin, pkce, provisionApp, type ProvisionedApp } from '../support/oauth-helpers';
import { startSampleVendor } from '../support/sample-vendor-process';
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
const alice = DEMO_USERS[0]!;

/**
 * The authorization code flow with PKCE in a real headless Chromium with the sample vendor app (tools/sample-vendor): connect,
 * sign in, consent, the vendor's API call, a refresh; a denial; the error page for a bad redirect URI.
 */
describe('a vendor app in the browser', () => {
  let p: TestPlatform;
  let vendor: ChildProcess | undefined;
  let vendorUrl: string;
  let app: ProvisionedApp;
  let browser: Browser;
  const cspViolations: string[] = [];

  async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
    return { context, page };
  }

  /** From the vendor's "connect" link through the sign-in page to the consent screen. */
  async function connectAndSignIn(page: Page) {
    await page.goto(`${vendorUrl}/`);
    await page.click('#connect');
    await page.waitForURL(/\/en\/signin\?next=/);
    await page.fill('#email', alice.email);
    await page.fill('#password', alice.password);
    await Promise.all([page.waitForURL(/\/en\/login\?/), page.click('button[type=submit]')]);
  }

  beforeAll(async () => {
    p = await startTestPlatform();
    // The vendor's address is part of its registration (redirect URI, logo): choose it first.
    const port = await freePort();
    vendorUrl = `http://127.0.0.1:${port}`;
    app = await provisionApp(p, {
      appName: 'Browser Vendor',
      redirectUris: [`${vendorUrl}/callback`],
      logoUrl: `${vendorUrl}/logo.svg`,
      scopes: ['read:accounts', 'read:banking'],
    });
    vendor = (
      await startSampleVendor({
        SAMPLE_VENDOR_PORT: String(port),
        SAMPLE_VENDOR_CLIENT_ID: app.clientId,
        SAMPLE_VENDOR_CLIENT_SECRET: app.clientSecret,
        SAMPLE_VENDOR_REDIRECT_URI: app.redirectUri,
        SAMPLE_VENDOR_LOGIN_URL: p.urls.login,
        SAMPLE_VENDOR_API_URL: p.urls.api,
        SAMPLE_VENDOR_SCOPES: 'read:accounts',
      })
    ).child;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    vendor?.kill();
    await p?.stop();
  });

  it('signs in, consents, and the vendor app shows the user accounts, refreshing its token when it expires', async () => {
    const { context, page } = await newPage();
    await connectAndSignIn(page);

    await expect(page.textContent('#consent-heading')).resolves.toBe('Browser Vendor wants to access your Trading API account');
    await expect(page.locator('#scopes li').allTextContents()).resolves.toEqual([
      expect.stringContaining('See your accounts, positions, margin and profile'),
    ]);
    // The logo (on the vendor's origin) is allowed by the page's policy and shows.
    await page.waitForFunction('document.getElementById("app-logo").complete');
    expect(await page.evaluate('document.getElementById("app-logo").naturalWidth')).toBe(64);

    await Promise.all([page.waitForURL(`${vendorUrl}/accounts`), page.click('#allow')]);
    await expect(page.textContent('#who')).resolves.toBe('Hello Alice Anders');
    const accounts = await page.locator('#accounts li').allTextContents();
    expect(accounts).toEqual(expect.arrayContaining([expect.stringContaining('DU1000001'), expect.stringContaining('DU1000002')]));
    await expect(page.textContent('#refreshes')).resolves.toContain('refreshed 0 time(s)');

    await Promise.all([page.waitForURL(`${vendorUrl}/accounts`), page.click('#expire')]);
    await expect(page.textContent('#refreshes')).resolves.toContain('refreshed 1 time(s)');
    await expect(page.locator('#accounts li').count()).resolves.toBe(accounts.length);

    // The user sees the app in the dashboard and revokes it there; the vendor loses access at once.
    await page.goto(`${p.urls.login}/en/developer`);
    const row = page.locator('#apps tr', { hasText: 'Browser Vendor' });
    await expect(row.textContent()).resolves.toContain('read:accounts');
    page.once('dialog', (dialog) => void dialog.accept());
    await Promise.all([page.waitForSelector('#notice'), row.locator('button', { hasText: 'Revoke' }).click()]);
    await expect(page.textContent('#notice')).resolves.toContain('Access for Browser Vendor is revoked');
    await page.goto(`${vendorUrl}/accounts`);
    await expect(page.textContent('#error')).resolves.toContain('invalid_grant');

    expect(cspViolations).toEqual([]);
    await context.close();
  });

  it('returns access_denied to the vendor when the user denies', async () => {
    const { context, page } = await newPage();
    await connectAndSignIn(page);
    await Promise.all([page.waitForURL(new RegExp(`^${vendorUrl}/callback\\?`)), page.click('#deny')]);
    await expect(page.textContent('#error')).resolves.toContain('access_denied');
    const url = new URL(page.url());
    expect(url.searchParams.get('code')).toBeNull();
    await context.close();
  });

  it('shows an error page and never redirects for a redirect URI that is not registered', async () => {
    const { context, page } = await newPage();
    const { challenge } = pkce();
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: 'https://evil.example/callback',
      scopes: 'read:accounts',
      state: 'x',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const response = await page.goto(`${p.urls.login}/en/login?${q}`);
    expect(response?.status()).toBe(400);
    expect(new URL(page.url()).origin).toBe(p.urls.login);
    // Plain words for the person; the exact reason folded away for the app's developer.
    await expect(page.textContent('#error-title')).resolves.toBe('This sign-in link does not work');
    await expect(page.textContent('#error-message')).resolves.toContain('Nothing was shared with the app');
    await expect(page.isVisible('#error-technical code')).resolves.toBe(false);
    await page.click('#error-technical summary');
    await expect(page.textContent('#error-technical code')).resolves.toContain(
      'redirect_uri is not one of the redirect URIs registered for Browser Vendor',
    );
    await context.close();
  });

  it('with two of three accounts ticked on the consent page, the vendor sees those two; the dashboard changes the set', async () => {
    const opened = await admin(p, 'POST', '/accounts', { email: alice.email, type: 'CASH', currency: 'EUR' });
    expect(opened.status).toBe(201);
    const third = opened.body as { accountId: string; number: string };
    const { context, page } = await newPage();
    await connectAndSignIn(page);
    // Every account is offered, ticked to begin with; the user unticks the new one.
    await expect(page.locator('#consent-accounts input[type=checkbox]:checked').count()).resolves.toBe(3);
    await page.uncheck(`#account-${third.accountId}`);
    await Promise.all([page.waitForURL(`${vendorUrl}/accounts`), page.click('#allow')]);
    const shown = await page.locator('#accounts li').allTextContents();
    expect(shown).toHaveLength(2);
    expect(shown.join(' ')).toContain('DU1000001');
    expect(shown.join(' ')).toContain('DU1000002');
    expect(shown.join(' ')).not.toContain(third.number);

    // The connected-apps page lists the two, and the user gives the app the third one instead of the margin account.
    await page.goto(`${p.urls.login}/en/developer`);
    const row = page.locator('#apps tr', { hasText: 'Browser Vendor' });
    await expect(row.locator('.app-accounts').textContent()).resolves.toMatch(/DU1000001.*DU1000002/);
    await row.locator('summary').click();
    await row.locator(`input[value="${third.accountId}"]`).check();
    await row.locator(`input[value="${DEMO_ACCOUNTS[1]!.id}"]`).uncheck();
    await Promise.all([page.waitForSelector('#notice'), row.locator('button', { hasText: 'Save accounts' }).click()]);
    await expect(page.textContent('#notice')).resolves.toContain('now reaches only the accounts you ticked');
    // The vendor's token named the old set and has stopped working; its refresh brings the new one.
    await page.goto(`${vendorUrl}/accounts`);
    const after = (await page.locator('#accounts li').allTextContents()).join(' ');
    expect(after).toContain('DU1000001');
    expect(after).toContain(third.number);
    expect(after).not.toContain('DU1000002');
    await context.close();
  });
});
