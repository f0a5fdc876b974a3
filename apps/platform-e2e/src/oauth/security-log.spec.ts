import { codeAt } from '../support/authenticator';
import { admin, extraAuth, provisionApp, tokensFor } from '../support/oauth-helpers';
import { DashboardClient, newUser } from '../support/pat-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const NEW_SIGN_IN = 'New sign-in to your Trading API account';
const PAT_CREATED = 'A personal access token was created for your Trading API account';
const PAT_REVOKED = 'A personal access token of your Trading API account was revoked';

/**
 * The security log over HTTP. Auth runs behind a trusted proxy (loopback), so each browser's
 * X-Forwarded-For is its address. Sign-ins and a PAT's life show in the dashboard's log; the user
 * is mailed for each, except a sign-in from an address already seen; no mail carries the token;
 * and nobody sees another user's events.
 */
describe('security log', () => {
  let p: TestPlatform;
  let auth: Awaited<ReturnType<typeof extraAuth>>;

  const browserAt = (address: string) =>
    new DashboardClient(auth.url, { 'x-forwarded-for': address, 'user-agent': `e2e browser at ${address}` });
  const outbox = (email: string): Promise<Array<{ subject: string; body: string; secret: string | null }>> =>
    p.auth.dataSource.query('SELECT subject, body, secret FROM email_outbox WHERE to_address = $1 ORDER BY id', [email]);
  /** The dashboard's security-log section, as the page's HTML has it. */
  const logSection = (page: string) => /<section class="card" id="security-log">[\s\S]*?<\/section>/.exec(page)?.[0] ?? '';
  const eventTypes = (section: string) => [...section.matchAll(/data-event-type="(\w+)"/g)].map((m) => m[1]);

  beforeAll(async () => {
    p = await startTestPlatform();
    auth = await extraAuth(p, { AUTH_TRUST_PROXY: ['loopback'] });
  }, 60_000);
  afterAll(async () => {
    await auth?.close();
    await p?.stop();
  });

  it('lists sign-ins and a PAT created and revoked, and mails each except a second sign-in from the same address', async () => {
    const alice = await newUser(p);
    const laptop = browserAt('203.0.113.71');
    expect((await laptop.signIn(alice.email, alice.password)).status).toBe(303);
    const phone = browserAt('198.51.100.72');
    expect((await phone.signIn(alice.email, alice.password)).status).toBe(303);
    // Another browser at the laptop's address: a known address, logged but not mailed.
    expect((await browserAt('203.0.113.71').signIn(alice.email, alice.password)).status).toBe(303);

    const created = await laptop.createToken({ name: 'log <e2e> & co' });
    const token = created.token!;
    const tokenId = token.split('.')[0]!;
    expect((await laptop.revoke(tokenId)).status).toBe(303);

    const page = await laptop.request('GET', '/en/developer');
    const section = logSection(page.body);
    expect(section).toContain('<h2>Security log</h2>');
    expect(eventTypes(section)).toEqual(['pat_revoked', 'pat_created', 'sign_in', 'sign_in', 'sign_in']);
    expect(section).toContain('Personal access token revoked');
    expect(section).toContain('Signed in with password');
    expect(section).toContain('198.51.100.72');
    expect(section).toContain('203.0.113.71');
    expect(section).toContain(`Token &quot;log &lt;e2e&gt; &amp; co&quot; (${tokenId})`);
    expect(section).not.toContain('<e2e>');
    expect(section).not.toContain(token);
    // The same log in German.
    const german = logSection((await laptop.request('GET', '/de/developer')).body);
    expect(german).toContain('Sicherheitsprotokoll');
    expect(german).toContain('Mit Passwort angemeldet');

    const mails = await outbox(alice.email);
    expect(mails.map((m) => m.subject)).toEqual([NEW_SIGN_IN, NEW_SIGN_IN, PAT_CREATED, PAT_REVOKED]);
    expect(mails[0]!.body).toContain('from 203.0.113.71 at ');
    expect(mails[1]!.body).toContain('from 198.51.100.72 at ');
    expect(mails[2]!.body).toContain(tokenId);
    const secret = token.split('.')[1]!;
    for (const mail of mails) {
      expect(mail.body).not.toContain(secret);
      expect(mail.secret).toBeNull();
    }
  });

  it("never shows one user another user's events, even from the same address", async () => {
    const alice = await newUser(p);
    const bob = await newUser(p);
    const alicesBrowser = browserAt('192.0.2.81');
    await alicesBrowser.signIn(alice.email, alice.password);
    await alicesBrowser.createToken({ name: 'alice only' });
    await browserAt('192.0.2.82').signIn(alice.email, alice.password);

    const bobsBrowser = browserAt('192.0.2.81');
    expect((await bobsBrowser.signIn(bob.email, bob.password)).status).toBe(303);
    const section = logSection((await bobsBrowser.request('GET', '/en/developer')).body);
    expect(eventTypes(section)).toEqual(['sign_in']);
    expect(section).not.toContain('alice only');
    expect(section).not.toContain('192.0.2.82');
    // Alice's address is new to Bob: his first sign-in from it is mailed to him, and nothing of Alice's is.
    expect((await outbox(bob.email)).map((m) => m.subject)).toEqual([NEW_SIGN_IN]);
    expect((await outbox(alice.email)).map((m) => m.subject)).toEqual([NEW_SIGN_IN, PAT_CREATED, NEW_SIGN_IN]);
  });

  it('logs and mails an app connected by consent and disconnected from the dashboard', async () => {
    const carol = await newUser(p);
    const vendor = await provisionApp(p);
    const [{ app_name: appName }] = await p.auth.dataSource.query('SELECT app_name FROM vendor_apps WHERE id = $1', [vendor.appId]);
    await tokensFor(p, vendor, carol, 'read:accounts');

    const browser = new DashboardClient(p.urls.login);
    await browser.signIn(carol.email, carol.password);
    const grantId = /data-grant-id="([^"]+)"/.exec((await browser.request('GET', '/en/developer')).body)![1]!;
    expect((await browser.request('POST', `/en/developer/apps/${grantId}/revoke`, { _csrf: browser.csrf })).status).toBe(303);

    const section = logSection((await browser.request('GET', '/en/developer')).body);
    expect(eventTypes(section)).toEqual(['app_disconnected', 'sign_in', 'app_connected', 'sign_in']);
    expect(section).toContain('App connected');
    expect(section).toContain('App disconnected');
    expect(section).toContain('Access: read:accounts');
    // Both sign-ins came from the same address: only the first is mailed.
    expect((await outbox(carol.email)).map((m) => m.subject)).toEqual([
      NEW_SIGN_IN,
      `${appName} can now access your Trading API account`,
      `${appName} can no longer access your Trading API account`,
    ]);
  });

  it('logs and mails a second factor added and removed, and the accounts an app may use changed', async () => {
    const dave = await newUser(p);
    const opened = await admin(p, 'POST', '/accounts', { email: dave.email, type: 'CASH', currency: 'USD' });
    const vendor = await provisionApp(p);
    const [{ app_name: appName }] = await p.auth.dataSource.query('SELECT app_name FROM vendor_apps WHERE id = $1', [vendor.appId]);
    await tokensFor(p, vendor, dave, 'read:accounts');

    const browser = new DashboardClient(p.urls.login);
    await browser.signIn(dave.email, dave.password);
    // An authenticator app set up, then removed with a recovery code.
    await browser.request('POST', '/en/developer/security/totp', { _csrf: browser.csrf });
    const secret = /data-secret="([A-Z2-7]+)"/.exec((await browser.request('GET', '/en/developer/security/totp')).body)![1]!;
    const confirmed = await browser.request('POST', '/en/developer/security/totp/confirm', {
      _csrf: browser.csrf,
      code: await codeAt(secret, Math.floor(Date.now() / 1000)),
    });
    const recovery = /<li><code>([2-9a-z]{5}-[2-9a-z]{5})<\/code><\/li>/.exec(confirmed.body)![1]!;
    const page = (await browser.request('GET', '/en/developer')).body;
    const factorId = /security\/totp\/([0-9a-f-]{36})\/remove/.exec(page)![1]!;
    const removed = await browser.request('POST', `/en/developer/security/totp/${factorId}/remove`, {
      _csrf: browser.csrf,
      code: recovery,
    });
    expect(removed.status).toBe(303);
    // The app now reaches the one account, chosen again on the connected-apps page.
    const grantId = /data-grant-id="([^"]+)"/.exec(page)![1]!;
    const changed = await browser.request('POST', `/en/developer/apps/${grantId}/accounts`, {
      _csrf: browser.csrf,
      accounts: [opened.body.accountId],
    });
    expect(changed.status).toBe(303);

    const section = logSection((await browser.request('GET', '/en/developer')).body);
    expect(eventTypes(section).slice(0, 3)).toEqual(['app_accounts_changed', 'factor_removed', 'factor_added']);
    expect(section).toContain('Second factor added');
    expect(section).toContain('Accounts: 1');
    expect((await outbox(dave.email)).map((m) => m.subject)).toEqual(
      expect.arrayContaining([
        'A second factor was added to your Trading API account',
        'A second factor was removed from your Trading API account',
        `The accounts ${appName} may use were changed`,
      ]),
    );
    // No notice carries the factor's secret or a recovery code.
    const bodies = (await outbox(dave.email)).map((m) => m.body).join('\n');
    expect(bodies).not.toContain(secret);
    expect(bodies).not.toContain(recovery);
  });
});
