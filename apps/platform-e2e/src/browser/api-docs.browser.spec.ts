import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { http } from '@trading/testing';
import { DEMO_USERS, DEMO_VENDOR_APP, type DemoCredentials, docsRedirectUris, prepareDemo } from '@trading/platform';
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

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/**
 * Swagger UI at /docs in a real headless Chromium, as `npm start` serves it: the document names
 * the facade's absolute {base_url}, the Authorize dialog explains the PAT exchange and takes a PAT
 * session, and signs in as the DEV demo app with the authorization code flow and PKCE.
 */
describe('API docs (Swagger UI) in a browser', () => {
  let p: TestPlatform;
  let browser: Browser;
  let page: Page;
  let docs: string;
  let demo: DemoCredentials;
  const dataDir = mkdtempSync(join(tmpdir(), 'api-docs-'));
  /** Anything a page's Content-Security-Policy refused, in the docs or the sign-in popup. */
  const cspViolations: string[] = [];

  beforeAll(async () => {
    // Known ports: {base_url} (FACADE_PUBLIC_URL) is http://localhost:<FACADE_PORT>/v1 and the sign-in pages'
    // address (the issuer) http://localhost:<AUTH_PORT>, as in `npm start`.
    const port = await freePort();
    const authPort = await freePort();
    p = await startTestPlatform({ FACADE_PORT: String(port), AUTH_PORT: String(authPort), PLATFORM_DATA_DIR: dataDir });
    demo = JSON.parse(readFileSync(await prepareDemo(p, p.config), 'utf8')) as DemoCredentials;
    docs = `http://localhost:${port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
    const context = await browser.newContext();
    context.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
    page = await context.newPage();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await p?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** What Swagger UI holds for a scheme after Authorize (its own state, read in the page). */
  const authorized = (scheme: string) =>
    page.evaluate(
      (name) =>
        (
          globalThis as unknown as {
            ui: { authSelectors: { authorized(): { toJS(): Record<string, { token?: { access_token: string }; value?: string }> } } };
          }
        ).ui.authSelectors
          .authorized()
          .toJS()[name],
      scheme,
    );

  it('serves the document with the absolute {base_url} and explains the PAT exchange', async () => {
    const doc = await http('GET', `${docs}/v1/openapi.json`);
    expect(doc.body.servers).toEqual([{ url: `${docs}/v1`, description: 'This deployment' }]);
    await page.goto(`${docs}/docs`);
    await page.waitForSelector('.swagger-ui .information-container');
    await expect(page.textContent('#docs-auth')).resolves.toContain(`curl -X POST ${docs}/v1/pat/login`);
    await expect(page.locator('.servers select').inputValue()).resolves.toBe(`${docs}/v1`);

    await page.click('.auth-wrapper .btn.authorize');
    const dialog = page.locator('.modal-ux');
    await expect(dialog.textContent()).resolves.toMatch(/POST \/pat\/login with your personal access token[\s\S]*paste the returned/);
    // A PAT session pasted into patSession is what "Try it out" sends.
    const session = await patSession(p, DEMO_USERS[0]!.email, 'READ_ONLY');
    const pat = dialog.locator('.auth-container', { hasText: 'patSession' });
    await pat.getByLabel('auth-bearer-value').fill(session);
    await pat.getByRole('button', { name: 'Apply credentials' }).click();
    expect((await authorized('patSession'))?.value).toBe(session);
    await pat.getByRole('button', { name: 'Remove authorization' }).click();
    await page.click('.modal-ux .close-modal');
  }, 60_000);

  it('signs in as the demo app with the authorization code flow and PKCE, and the token calls the API', async () => {
    await page.click('.auth-wrapper .btn.authorize');
    const oauth = page.locator('.modal-ux .auth-container', { hasText: 'oauth2' });
    await expect(oauth.locator('#client_id_authorizationCode').inputValue()).resolves.toBe(DEMO_VENDOR_APP.clientId);
    await oauth.locator('#client_secret_authorizationCode').fill(demo.clientSecret);
    await oauth.locator('label[for="read:accounts-authorizationCode-checkbox-oauth2"]').click();

    // npm start registers Swagger UI's redirect page for the demo app in DEV, once (a second start adds nothing).
    const redirects = (await p.auth.registry.findClient(DEMO_VENDOR_APP.clientId, 'DEV'))!.redirectUris;
    expect(redirects).toEqual(expect.arrayContaining([...DEMO_VENDOR_APP.registration.redirectUris, ...docsRedirectUris(`${docs}/v1`)]));
    await prepareDemo(p, p.config);
    expect((await p.auth.registry.findClient(DEMO_VENDOR_APP.clientId, 'DEV'))!.redirectUris).toEqual(redirects);

    const [popup] = await Promise.all([
      page.context().waitForEvent('page'),
      oauth.getByRole('button', { name: 'Apply given OAuth2 credentials' }).click(),
    ]);
    // PKCE: the authorization request carries an S256 challenge.
    await popup.waitForURL(/\/en\/signin\?next=/);
    const next = decodeURIComponent(new URL(popup.url()).searchParams.get('next') ?? '');
    expect(next).toContain('code_challenge_method=S256');
    expect(next).toContain(`client_id=${DEMO_VENDOR_APP.clientId}`);
    await popup.fill('#email', DEMO_USERS[0]!.email);
    await popup.fill('#password', DEMO_USERS[0]!.password);
    await Promise.all([popup.waitForURL(/\/en\/login\?/), popup.click('button[type=submit]')]);
    await Promise.all([popup.waitForEvent('close'), popup.click('#allow')]);

    await oauth.getByRole('button', { name: 'Remove authorization' }).waitFor();
    const token = (await authorized('oauth2'))?.token?.access_token;
    expect(token).toEqual(expect.any(String));
    const accounts = await http('GET', `${docs}/v1/accounts`, { token });
    expect(accounts.status).toBe(200);
    expect((await http('GET', `${docs}/v1/banking/${accounts.body.accounts[0].id}/balance`, { token })).status).toBe(403); // read:accounts only
  }, 60_000);

  it('"Try it out" calls the API, and nothing the docs or the sign-in need was refused by their policy', async () => {
    // The OAuth token of the test before is what it sends (read:accounts).
    await page.click('.modal-ux .close-modal');
    const list = page.locator('.opblock', { hasText: '/accounts' }).first();
    await list.locator('.opblock-summary').click();
    await list.getByRole('button', { name: 'Try it out' }).click();
    await list.getByRole('button', { name: 'Execute' }).click();
    const status = list.locator('.live-responses-table tbody .response-col_status').first();
    await status.waitFor();
    await expect(status.textContent()).resolves.toMatch(/^\s*200/);
    expect(cspViolations).toEqual([]);
  }, 60_000);

  it('cannot be framed by another site (clickjacking)', async () => {
    const attacker = await (await browser.newContext()).newPage();
    try {
      await attacker.setContent(`<iframe id="docs-frame" src="${docs}/docs" width="800" height="600"></iframe>`);
      const frame = (await (await attacker.waitForSelector('#docs-frame')).contentFrame())!;
      await frame.waitForLoadState('load');
      // Refused, the frame holds the browser's error page, not Swagger UI.
      expect(await frame.locator('#docs').count()).toBe(0);
    } finally {
      await attacker.close();
    }
  }, 30_000);
});
