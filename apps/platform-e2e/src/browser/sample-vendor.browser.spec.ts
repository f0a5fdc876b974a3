import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import { freePort, http } from '@trading/testing';
import { DEMO_USERS } from '@trading/platform';
import { provisionApp, type ProvisionedApp } from '../support/oauth-helpers';
import { SAMPLE_VENDOR_ROOT as ROOT, SAMPLE_VENDOR_TSX as TSX, startSampleVendor } from '../support/sample-vendor-process';
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
 * The sample vendor app (tools/sample-vendor) as a vendor would copy it, in headless Chromium:
 * the plain profile's dashboard on a phone and a desktop (accounts, quotes, positions, a bracket
 * order, a market buy filled at the quoted ask, nothing to scroll sideways, nothing its CSP
 * blocks), the DEV sandbox filling part of an order from its page and the app's own webhook receiver
 * showing the event it verified (its endpoint registered at start, and taken over with a rotated
 * secret after a restart), and the FAPI 2.0 profile end to end
 * (its JWKS registered for private_key_jwt, PAR and DPoP required of the app, server nonces on,
 * OpenID Connect sign-in).
 */
describe('the sample vendor app', () => {
  let p: TestPlatform;
  let browser: Browser;
  const vendors: ChildProcess[] = [];
  let keyDir: string;

  beforeAll(async () => {
    // DPoP proofs name the public URLs (htu), and the metadata the issuer: both known before listening.
    const [facadePort, authPort] = [await freePort(), await freePort()];
    // The price feed holds still: the engine fills a market buy at the ask of the pass that fills
    // it, so only an unmoved quote makes that the ask the page showed before the order went in.
    p = await startTestPlatform({ FACADE_PORT: String(facadePort), AUTH_PORT: String(authPort) }, { oms: { OMS_PRICE_TICK_MS: '0' } });
    keyDir = mkdtempSync(join(tmpdir(), 'sample-vendor-'));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  }, 60_000);
  afterAll(async () => {
    jest.restoreAllMocks();
    await browser?.close();
    for (const v of vendors) v.kill();
    await p?.stop();
    if (keyDir) rmSync(keyDir, { recursive: true, force: true });
  });

  /** The public API URL, as the platform names it in DPoP proofs and its metadata. */
  const publicApi = () => `http://localhost:${new URL(p.urls.api).port}/v1`;

  /** From the vendor's "connect" link through sign-in and consent back to its dashboard. */
  async function connect(page: Page, vendorUrl: string) {
    await page.goto(`${vendorUrl}/`);
    await page.click('#connect');
    await page.waitForURL(/\/en\/signin\?next=/);
    await page.fill('#email', alice.email);
    await page.fill('#password', alice.password);
    await Promise.all([page.waitForURL(/\/en\/login\?/), page.click('button[type=submit]')]);
    await Promise.all([page.waitForURL(`${vendorUrl}/accounts`), page.click('#allow')]);
  }

  const noSideScroll = (page: Page) => page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth');

  describe('plain profile', () => {
    let vendorUrl: string;
    let plainApp: ProvisionedApp;
    let plainEnv: Record<string, string>;
    let plainVendor: { child: ChildProcess; output: () => string };

    beforeAll(async () => {
      const port = await freePort();
      vendorUrl = `http://127.0.0.1:${port}`;
      plainApp = await provisionApp(p, {
        appName: 'Sample Vendor Plain',
        redirectUris: [`${vendorUrl}/callback`],
        logoUrl: `${vendorUrl}/logo.svg`,
        scopes: ['read:accounts', 'read:banking', 'read:orders', 'write:orders'],
      });
      plainEnv = {
        SAMPLE_VENDOR_PORT: String(port),
        SAMPLE_VENDOR_CLIENT_ID: plainApp.clientId,
        SAMPLE_VENDOR_CLIENT_SECRET: plainApp.clientSecret,
        SAMPLE_VENDOR_REDIRECT_URI: plainApp.redirectUri,
        SAMPLE_VENDOR_LOGIN_URL: p.urls.login,
        SAMPLE_VENDOR_API_URL: p.urls.api,
        SAMPLE_VENDOR_SCOPES: 'read:accounts,read:banking,read:orders,write:orders,read:market',
        SAMPLE_VENDOR_LIVE_INTERVAL_MS: '500',
      };
      plainVendor = await startSampleVendor(plainEnv);
      vendors.push(plainVendor.child);
    }, 60_000);

    for (const width of [375, 1280])
      it(`at ${width} px: shows accounts, balances, quotes and positions, places a bracket order and a market buy, updates live, fits the screen`, async () => {
        const context = await browser.newContext({ viewport: { width, height: 800 } });
        const page = await context.newPage();
        const cspViolations: string[] = [];
        page.on('console', (m) => {
          if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
        });
        await connect(page, vendorUrl);

        await expect(page.textContent('#who')).resolves.toBe('Hello Alice Anders');
        expect(await page.locator('#accounts li').allTextContents()).toEqual(
          expect.arrayContaining([expect.stringContaining('DU1000001'), expect.stringContaining('DU1000002')]),
        );
        // The stylesheet is a file the CSP allows, and it is applied; a phone's viewport is declared.
        expect(await page.getAttribute('meta[name=viewport]', 'content')).toBe('width=device-width, initial-scale=1');
        expect(await page.evaluate<string>('getComputedStyle(document.querySelector("header")).backgroundColor')).toBe('rgb(15, 118, 110)');
        await expect(page.locator('#balances td[data-label="Cash"]').first().textContent()).resolves.toMatch(/^\d+\.\d{2}$/);
        await expect(page.locator('#balances td[data-label="Pending in"]').first().textContent()).resolves.toMatch(/^\d+\.\d{2}$/);
        // Quotes for the watchlist (this account holds nothing yet).
        const aapl = page.locator('#quotes tr[data-symbol="AAPL"]');
        await expect(aapl.locator('td[data-label="Bid"]').textContent()).resolves.toMatch(/^\d+\.\d{2}$/);
        expect(await noSideScroll(page)).toBe(true);

        // A bracket order, prefilled from the first quote: entry at the bid, exits 5 % either side.
        const entry = Number(await page.inputValue('#order-limit'));
        expect(entry).toBeGreaterThan(0);
        expect(Number(await page.inputValue('#order-take-profit'))).toBeGreaterThan(entry);
        expect(Number(await page.inputValue('#order-stop-loss'))).toBeLessThan(entry);
        await page.fill('#order-quantity', '2');
        await Promise.all([page.waitForURL(/\/accounts\?account=/), page.click('#place-order')]);
        const notice = (await page.textContent('#notice'))!;
        expect(notice).toMatch(/^Bracket order [0-9a-f-]{36} placed: /);
        const orderId = /Bracket order ([0-9a-f-]{36})/.exec(notice)![1]!;
        const row = page.locator(`#orders tr[data-order="${orderId}"]`);
        await expect(row.locator('td[data-label="Order"]').textContent()).resolves.toBe('BUY AAPL LIMIT BRACKET');
        await expect(row.locator('td[data-label="Qty"]').textContent()).resolves.toMatch(/\/2$/);
        // The exits wait for the entry: they are in the list too, PENDING.
        await expect(page.locator('#orders td[data-label="Order"]', { hasText: 'take-profit' }).count()).resolves.toBeGreaterThan(0);
        // Live: the page's script asks the vendor backend again and rewrites the tables.
        await page.locator('#live-status', { hasText: 'updated' }).waitFor();
        await expect(page.locator(`#orders tr[data-order="${orderId}"]`).count()).resolves.toBe(1);
        expect(await noSideScroll(page)).toBe(true);

        // A market buy fills at the ask the quotes table shows: above the last price, so a fill at
        // the last price (or at the bid) fails here.
        const quoted = async (label: string) => (await aapl.locator(`td[data-label="${label}"]`).textContent())!;
        const [bid, ask, last] = [await quoted('Bid'), await quoted('Ask'), await quoted('Last')];
        expect(Number(ask)).toBeGreaterThan(Number(last));
        await page.fill('#market-symbol', 'AAPL');
        await page.selectOption('#market-side', 'BUY');
        await page.fill('#market-quantity', '1');
        await Promise.all([page.waitForURL(/\/accounts\?account=/), page.click('#place-market-order')]);
        const marketNotice = (await page.textContent('#notice'))!;
        expect(marketNotice).toMatch(/^Market order [0-9a-f-]{36} placed: /);
        const marketId = /Market order ([0-9a-f-]{36})/.exec(marketNotice)![1]!;
        const market = page.locator(`#orders tr[data-order="${marketId}"]`);
        // The engine fills it within a pass or two; the live update shows it.
        await market.locator('td[data-label="Status"]', { hasText: /^FILLED$/ }).waitFor();
        await expect(market.locator('td[data-label="Order"]').textContent()).resolves.toBe('BUY AAPL MARKET');
        await expect(market.locator('td[data-label="Qty"]').textContent()).resolves.toBe('1/1');
        await expect(market.locator('td[data-label="Price"]').textContent()).resolves.toBe('market');
        await expect(market.locator('td[data-label="Bid / ask when placed"]').textContent()).resolves.toBe(`${bid} / ${ask}`);
        const filledAt = (await market.locator('td[data-label="Filled at"]').textContent())!;
        expect(filledAt).toMatch(/^\d+\.\d{2,}$/);
        expect(Number(filledAt)).toBe(Number(ask));
        await expect(page.textContent('#fill-rule')).resolves.toContain('Market buys fill at the ask and market sells at the bid');
        expect(await noSideScroll(page)).toBe(true);

        // The account with holdings: positions with their value.
        await Promise.all([page.waitForURL(/account=/), page.locator('#accounts a', { hasText: 'DU1000002' }).click()]);
        const positions = await page.locator('#positions td[data-label="Symbol"]').allTextContents();
        expect(positions).toEqual(expect.arrayContaining(['AAPL', 'MSFT']));
        await expect(page.locator('#positions td[data-label="Value"]').first().textContent()).resolves.toMatch(/^\d+\.\d{2} USD$/);
        expect(await noSideScroll(page)).toBe(true);

        // No token ever reaches the page.
        expect(await page.content()).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\./);
        expect(cspViolations).toEqual([]);
        await context.close();
      }, 60_000);
    /** Waits for the app's one line about registering its webhook endpoint, which follows its start. */
    async function webhookLog(output: () => string): Promise<string> {
      const end = Date.now() + 20_000;
      while (!output().includes('Webhooks:') && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
      return output();
    }

    /** A bracket entry at the bid rests (a buy fills at the ask): a working order for the sandbox. Its id and account. */
    async function placeWorkingOrder(page: Page, quantity: string) {
      await page.fill('#order-quantity', quantity);
      await Promise.all([page.waitForURL(/\/accounts\?account=/), page.click('#place-order')]);
      const orderId = /Bracket order ([0-9a-f-]{36})/.exec((await page.textContent('#notice'))!)![1]!;
      await orderRow(page, orderId).locator('td[data-label="Status"]', { hasText: /^NEW$/ }).waitFor();
      return { orderId, accountId: new URL(page.url()).searchParams.get('account')! };
    }

    const orderRow = (page: Page, orderId: string) => page.locator(`#orders tr[data-order="${orderId}"]`);
    const fillPart = (page: Page, orderId: string) =>
      Promise.all([
        page.waitForURL(/\/accounts\?account=/),
        orderRow(page, orderId).locator('button', { hasText: 'Fill part (sandbox)' }).click(),
      ]);

    /** The webhooks page's row for this event about this order, once delivered (it takes a moment). */
    async function webhookRow(page: Page, type: string, orderId: string) {
      await Promise.all([page.waitForURL(`${vendorUrl}/webhooks`), page.click('#webhooks-link')]);
      const row = page.locator('#webhooks tr', { hasText: type }).filter({ hasText: orderId });
      for (let i = 0; i < 80 && !(await row.count()); i++) {
        await new Promise((r) => setTimeout(r, 250));
        await page.reload();
      }
      return row;
    }

    it('fills part of a working order through the DEV sandbox, and shows its order.partially_filled webhook, verified', async () => {
      // At start the app registered its receiver with its own client credentials (no user token).
      expect(await webhookLog(plainVendor.output)).toContain(`Webhooks: registered ${vendorUrl}/webhooks`);
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await connect(page, vendorUrl);
      const { orderId, accountId } = await placeWorkingOrder(page, '4');

      // About half of what is left, in whole shares: 2 of 4, then 1 of 2, then the last one.
      await fillPart(page, orderId);
      await expect(page.textContent('#notice')).resolves.toBe(`Sandbox filled 2 of order ${orderId}: PARTIALLY_FILLED (2/4).`);
      await expect(orderRow(page, orderId).locator('td[data-label="Qty"]').textContent()).resolves.toBe('2/4');
      await expect(orderRow(page, orderId).locator('td[data-label="Status"]').textContent()).resolves.toBe('PARTIALLY_FILLED');
      // The exits wait for the entry: they are not working, so the sandbox is not offered for them.
      const exit = page.locator('#orders tr', { hasText: 'take-profit' }).first();
      await expect(exit.locator('button.fill-part').count()).resolves.toBe(0);

      // The platform's event, verified by the app's receiver, on its webhooks page.
      const partial = await webhookRow(page, 'order.partially_filled', orderId);
      await expect(partial.locator('td[data-label="Status"]').textContent()).resolves.toBe('PARTIALLY_FILLED');
      await expect(partial.locator('td[data-label="Time"]').textContent()).resolves.toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);
      // Newest first: the order's acceptance came before its partial fill.
      const types = await page.locator('#webhooks tr', { hasText: orderId }).locator('td[data-label="Type"]').allTextContents();
      expect(types.indexOf('order.partially_filled')).toBeLessThan(types.indexOf('order.accepted'));

      // A message the platform did not sign is refused and never shown, though it names the visitor's account.
      const forged = await http('POST', `${vendorUrl}/webhooks`, {
        body: {
          id: 'msg_forged',
          type: 'order.filled',
          timestamp: new Date().toISOString(),
          data: { order: { id: orderId, accountId, status: 'FILLED' } },
        },
        headers: {
          'webhook-id': 'msg_forged',
          'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
          'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}`,
        },
      });
      expect(forged.status).toBe(400);
      await page.reload();
      await expect(page.locator('#webhooks tr[data-message="msg_forged"]').count()).resolves.toBe(0);

      await Promise.all([page.waitForURL(`${vendorUrl}/accounts`), page.click('text=Back to the dashboard')]);
      await fillPart(page, orderId);
      await expect(page.textContent('#notice')).resolves.toBe(`Sandbox filled 1 of order ${orderId}: PARTIALLY_FILLED (3/4).`);
      await fillPart(page, orderId);
      await expect(page.textContent('#notice')).resolves.toBe(`Sandbox filled 1 of order ${orderId}: FILLED (4/4).`);
      await expect(orderRow(page, orderId).locator('button.fill-part').count()).resolves.toBe(0);
      // Sent again from a page shown before it filled: the API's refusal, as it gave it.
      const again = await page.request.post(`${vendorUrl}/orders/${orderId}/sandbox-fill`, { form: { accountId }, maxRedirects: 0 });
      expect(again.status()).toBe(303);
      await page.goto(`${vendorUrl}${again.headers()['location']}`);
      await expect(page.textContent('#order-error')).resolves.toMatch(
        /^The sandbox refused the fill \(409 CONFLICT\): The order is already filled/,
      );
      await context.close();
    }, 90_000);

    it('started again at the same address, takes over its endpoint with a fresh secret, and verifies what arrives with it', async () => {
      const { child } = plainVendor;
      await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : (child.once('exit', resolve), child.kill())));
      plainVendor = await startSampleVendor(plainEnv);
      vendors.push(plainVendor.child);
      const log = await webhookLog(plainVendor.output);
      const basic = `Basic ${Buffer.from(`${encodeURIComponent(plainApp.clientId)}:${encodeURIComponent(plainApp.clientSecret)}`).toString('base64')}`;
      const listed = await http('GET', `${p.urls.api}/webhooks/endpoints`, { headers: { authorization: basic } });
      const mine = listed.body.endpoints.filter((e: { url: string }) => e.url === `${vendorUrl}/webhooks`);
      expect(mine).toHaveLength(1); // reused, not registered twice
      expect(log).toContain(`Webhooks: endpoint ${mine[0].id} already registered for ${vendorUrl}/webhooks; rotated its secret`);

      // Only the rotated secret is known to this process: the event verifying proves it signs.
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await connect(page, vendorUrl);
      const { orderId } = await placeWorkingOrder(page, '2');
      await fillPart(page, orderId);
      await expect(page.textContent('#notice')).resolves.toBe(`Sandbox filled 1 of order ${orderId}: PARTIALLY_FILLED (1/2).`);
      const partial = await webhookRow(page, 'order.partially_filled', orderId);
      await expect(partial.locator('td[data-label="Status"]').textContent()).resolves.toBe('PARTIALLY_FILLED');
      await context.close();
    }, 90_000);
  });

  describe('FAPI 2.0 profile', () => {
    let vendorUrl: string;
    let app: ProvisionedApp;
    let jwks: { keys: Array<Record<string, unknown>> };

    beforeAll(async () => {
      const port = await freePort();
      vendorUrl = `http://127.0.0.1:${port}`;
      const env = {
        SAMPLE_VENDOR_PROFILE: 'fapi2',
        // What this app is approved for: the reads and sign-in (the default adds write:orders, which only the demo app holds).
        SAMPLE_VENDOR_SCOPES: 'openid profile email read:accounts read:banking read:orders read:market',
        SAMPLE_VENDOR_KEY_FILE: join(keyDir, 'client-key.json'),
        SAMPLE_VENDOR_PORT: String(port),
        SAMPLE_VENDOR_LOGIN_URL: p.urls.login,
        SAMPLE_VENDOR_API_URL: publicApi(),
      };
      // The operator's steps: the app prints its public JWKS, which is registered for private_key_jwt.
      const printed = await promisify(execFile)(TSX, ['tools/sample-vendor/main.ts', '--print-jwks'], {
        cwd: ROOT,
        env: { ...process.env, ...env },
      });
      jwks = JSON.parse(printed.stdout);
      expect(jwks.keys).toEqual([expect.objectContaining({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: expect.any(String) })]);
      expect(jwks.keys[0]).not.toHaveProperty('d');
      app = await provisionApp(p, {
        appName: 'Sample Vendor FAPI',
        redirectUris: [`${vendorUrl}/callback`],
        logoUrl: `${vendorUrl}/logo.svg`,
        scopes: ['read:accounts', 'read:banking', 'read:orders'],
        tokenEndpointAuthMethod: 'private_key_jwt',
        jwks,
        requirePushedAuthorizationRequests: true,
        dpopBoundAccessTokens: true,
      });
      // Server nonces for this app (the per-app policy the registry does not set yet): its first
      // DPoP token request is answered use_dpop_nonce, and the app sends it again with the nonce.
      const registry = p.auth.registry;
      const findClient = registry.findClient.bind(registry);
      jest.spyOn(registry, 'findClient').mockImplementation(async (...args) => {
        const client = await findClient(...args);
        return client && client.clientId === app.clientId ? Object.assign(client, { dpopNonceRequired: true }) : client;
      });
      const started = await startSampleVendor({
        ...env,
        SAMPLE_VENDOR_CLIENT_ID: app.clientId,
        SAMPLE_VENDOR_REDIRECT_URI: app.redirectUri,
      });
      vendors.push(started.child);
      expect(started.output()).toContain(JSON.stringify(jwks, null, 2)); // the same key, read back from its file
    }, 90_000);

    it('serves the JWKS it signs with', async () => {
      const res = await http('GET', `${vendorUrl}/jwks.json`);
      expect(res.body).toEqual(jwks);
    });

    it('pushes the request, authenticates with private_key_jwt, binds its tokens with DPoP and signs in with OpenID Connect', async () => {
      const context = await browser.newContext({ viewport: { width: 375, height: 800 } });
      const page = await context.newPage();
      const loginRequests: URL[] = [];
      page.on('request', (r) => {
        if (/\/en\/login\?/.test(r.url())) loginRequests.push(new URL(r.url()));
      });
      await connect(page, vendorUrl);

      // PAR: the browser carried client_id and request_uri only.
      expect([...loginRequests[0]!.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
      expect(loginRequests[0]!.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:/);

      // The name comes from the verified ID token (profile scope), the accounts from DPoP-bound calls.
      await expect(page.textContent('#who')).resolves.toBe('Hello Alice Anders');
      await expect(page.textContent('#id-token')).resolves.toContain(alice.email);
      expect(await page.locator('#accounts li').allTextContents()).toEqual(
        expect.arrayContaining([expect.stringContaining('DU1000001'), expect.stringContaining('DU1000002')]),
      );
      await expect(page.textContent('#token-type')).resolves.toBe('DPoP');
      await expect(page.textContent('#auth-scheme')).resolves.toBe('DPoP');
      await expect(page.locator('#quotes tr[data-symbol="MSFT"] td[data-label="Ask"]').textContent()).resolves.toMatch(/^\d+\.\d{2}$/);
      expect(await noSideScroll(page)).toBe(true);

      const debug = await (await page.request.get(`${vendorUrl}/debug/session`)).json();
      expect(debug).toMatchObject({
        profile: 'fapi2',
        connected: true,
        tokenType: 'DPoP',
        lastAuthScheme: 'DPoP',
        dpopThumbprint: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        dpopNonceRetries: 1, // the code exchange, once: the refresh below reuses the nonce
        idTokenSubject: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      });
      expect(debug.scope.split(' ')).toEqual(expect.arrayContaining(['openid', 'read:accounts', 'read:market']));

      // A bound refresh (a proof of the same key, a new assertion), and the calls go on with DPoP.
      await Promise.all([page.waitForURL(`${vendorUrl}/accounts`), page.click('#expire')]);
      await expect(page.textContent('#refreshes')).resolves.toContain('refreshed 1 time(s)');
      await expect(page.textContent('#token-type')).resolves.toBe('DPoP');
      await expect(page.locator('#accounts li').count()).resolves.toBeGreaterThanOrEqual(2);
      expect((await (await page.request.get(`${vendorUrl}/debug/session`)).json()).refreshes).toBe(1);

      // Disconnecting revokes with an assertion too.
      await Promise.all([page.waitForURL(`${vendorUrl}/`), page.click('#disconnect')]);
      await expect(page.textContent('#status')).resolves.toBe('Not connected.');
      await context.close();
    }, 60_000);
  });
});
