import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { patSession } from '../support/sessions';
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

const isLocal = (url: string) => ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url).hostname);

/**
 * The gateway's GraphQL explorer (bundled GraphiQL) in a real headless Chromium with every
 * request off this machine aborted: the page, its script and style come from the gateway, and
 * a query with a PAT session returns data.
 */
describe('GraphQL explorer in a browser, offline', () => {
  let p: TestPlatform;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const external: string[] = [];
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    p = await startTestPlatform();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
    context = await browser.newContext();
    // No CDN, no font service, nothing: anything not on this machine fails (and is recorded).
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('data:') || isLocal(url)) return route.continue();
      external.push(url);
      return route.abort('internetdisconnected');
    });
    page = await context.newPage();
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
    page.on('pageerror', (err) => pageErrors.push(err.message));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await p?.stop();
  });

  /** The CodeMirror 5 editors GraphiQL 4 renders keep their instance on the element. */
  type WithEditor = { CodeMirror: { getValue(): string; setValue(value: string): void } };
  const responseText = () =>
    page.locator('.graphiql-response .CodeMirror').evaluate((el) => (el as unknown as WithEditor).CodeMirror.getValue());
  const setQuery = (query: string) =>
    page.locator('.graphiql-query-editor .CodeMirror').evaluate((el, q) => (el as unknown as WithEditor).CodeMirror.setValue(q), query);
  const responseShows = (text: string) => page.locator('.graphiql-response', { hasText: text }).waitFor();

  it('loads from the gateway alone and answers a query with a PAT session', async () => {
    const session = await patSession(p, DEMO_USERS[0]!.email, 'READ_ONLY');
    const loaded = await page.goto(p.urls.gateway);
    expect(loaded?.status()).toBe(200);
    expect(loaded?.headers()['content-security-policy']).toContain("default-src 'none'");
    await page.waitForSelector('.graphiql-container');
    await expect(page.textContent('#token-state')).resolves.toContain('No token');

    // Without a token the gateway refuses, and the explorer shows it.
    await setQuery('{ accounts { id number } }');
    await page.click('.graphiql-execute-button');
    await responseShows('UNAUTHENTICATED');

    await page.fill('#token', session);
    await page.click('#apply-token');
    await expect(page.getAttribute('#token-state', 'data-state')).resolves.toBe('set');
    await setQuery(`{ account(id: "${DEMO_ACCOUNTS[0]!.id}") { number balances { currency cash } } accounts { id number } }`);
    await page.click('.graphiql-execute-button');
    await responseShows('"accounts"');
    const result = JSON.parse(await responseText());
    expect(result.errors).toBeUndefined();
    expect(result.data.accounts.map((a: { id: string }) => a.id)).toContain(DEMO_ACCOUNTS[0]!.id);
    expect(result.data.account.balances[0]).toEqual({ currency: expect.any(String), cash: expect.any(String) });

    // With the token, the schema arrived by introspection: the documentation explorer lists the root types.
    await page.click('[aria-label="Show Documentation Explorer"]');
    await page.waitForSelector('.graphiql-doc-explorer');
    await expect(page.textContent('.graphiql-doc-explorer')).resolves.toContain('Query');

    expect(external).toEqual([]);
    expect(cspViolations).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
