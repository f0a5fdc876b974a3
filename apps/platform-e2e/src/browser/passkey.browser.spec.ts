import type { Browser, CDPSession, Page } from 'playwright-core';
import { freePort } from '@trading/testing';
import { launchChromium, screenshot } from '../support/browser-pages';
import { newUser } from '../support/pat-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

/**
 * Passkeys in a real headless Chromium, with its virtual authenticator (CTAP2, resident keys,
 * user verification) driven over the DevTools protocol: added in the dashboard's "Security"
 * section, renamed, used to sign in without a password and after one, to confirm an action, and
 * removed. The page is http://localhost:<port>, auth's public address (the passkeys' RP ID).
 */
describe('passkeys in a browser', () => {
  let p: TestPlatform;
  let browser: Browser;
  let base: string;
  const cspViolations: string[] = [];

  /** A page with a virtual platform authenticator that says yes (presence and verification) on its own. */
  async function pageWithAuthenticator(): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(8000);
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    return { page, cdp, authenticatorId };
  }
  async function signInWithPassword(page: Page, user: { email: string; password: string }) {
    await page.goto(`${base}/en/signin`);
    await page.fill('#email', user.email);
    await page.fill('#password', user.password);
    await page.click('#signin form[action="/en/signin"] button[type=submit]');
  }
  async function signOut(page: Page) {
    await Promise.all([page.waitForURL(/\/en\/signin$/), page.click('header form.signout button')]);
  }

  beforeAll(async () => {
    const port = await freePort();
    p = await startTestPlatform({ AUTH_PORT: String(port) });
    base = `http://localhost:${port}`;
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await p?.stop();
  });

  it('adds a passkey, renames it, signs in with it alone and after the password, confirms with it, and removes it', async () => {
    const user = await newUser(p);
    const { page, cdp, authenticatorId } = await pageWithAuthenticator();
    await signInWithPassword(page, user);
    await page.waitForURL(/\/en\/developer$/);

    // Security: no passkey yet; one is added under the name typed.
    await expect(page.textContent('#no-passkey')).resolves.toBe('No passkey is added.');
    await page.fill('#new-passkey-name', 'Work laptop');
    await Promise.all([page.waitForURL(/\/en\/developer#security$/), page.click('#add-passkey button[type=submit]')]);
    await page.waitForSelector('#passkeys');
    const rows = page.locator('#passkeys tbody tr');
    await expect(rows.count()).resolves.toBe(1);
    await expect(rows.locator('input[name=name]').inputValue()).resolves.toBe('Work laptop');
    await expect(rows.locator('td').nth(1).textContent()).resolves.toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
    await expect(rows.locator('td').nth(2).textContent()).resolves.toBe('Never');
    // A resident key on the authenticator, for this site.
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]).toMatchObject({ isResidentCredential: true, rpId: 'localhost' });
    await screenshot(page, 'passkey-added');

    // Renamed in place.
    await rows.locator('input[name=name]').fill('Laptop');
    await Promise.all([page.waitForURL(/\/en\/developer#security$/), rows.locator('.rename-passkey button').click()]);
    await expect(page.locator('#passkeys tbody tr input[name=name]').inputValue()).resolves.toBe('Laptop');

    // This session signed in with the password alone: a read-and-write token now needs a second factor
    // first, and the passkey gives it, on the dashboard itself.
    await expect(page.locator('#step-up-needed').count()).resolves.toBe(1);
    await Promise.all([page.waitForURL(/\/en\/developer#create-token$/), page.click('#step-up-passkey button')]);
    await page.waitForSelector('#create-token');
    await expect(page.locator('#step-up-needed').count()).resolves.toBe(0);
    await signOut(page);

    // Without a password: the sign-in page's passkey button.
    await page.goto(`${base}/en/signin`);
    await Promise.all([page.waitForURL(/\/en\/developer$/), page.click('#signin-passkey button')]);
    await expect(page.textContent('header .who')).resolves.toBe(user.email);
    await expect(page.locator('#passkeys tbody tr td').nth(2).textContent()).resolves.toMatch(/UTC$/);
    await expect(page.locator('#security-events tbody tr').first().locator('td').first().textContent()).resolves.toBe(
      'Signed in with a passkey',
    );
    await signOut(page);

    // After the password: the second step offers the passkey (no code field: the user has no authenticator app).
    await signInWithPassword(page, user);
    await page.waitForURL(/\/en\/signin\/second-factor$/);
    await expect(page.locator('#second-step-form').count()).resolves.toBe(0);
    await screenshot(page, 'passkey-second-step');
    await Promise.all([page.waitForURL(/\/en\/developer$/), page.click('#second-step-passkey button')]);
    await expect(page.textContent('header .who')).resolves.toBe(user.email);

    // A passkey confirms an action as a code does.
    await page.goto(`${base}/en/developer/security/confirm?next=${encodeURIComponent('/en/developer')}`);
    await Promise.all([page.waitForURL(/\/en\/developer$/), page.click('#step-up-passkey button')]);

    // Removed (the factor was given in the last ten minutes): sign-in asks for the password alone again.
    page.once('dialog', (d) => void d.accept());
    await Promise.all([page.waitForURL(/\/en\/developer#security$/), page.click('#passkeys .remove-passkey button')]);
    await expect(page.textContent('#no-passkey')).resolves.toBe('No passkey is added.');
    await signOut(page);
    await signInWithPassword(page, user);
    await page.waitForURL(/\/en\/developer$/);

    expect(cspViolations).toEqual([]);
  }, 60_000);

  it('shows the passkey button on the sign-in page in German and French, and says so when no passkey answers', async () => {
    const { page, cdp, authenticatorId } = await pageWithAuthenticator();
    // No credential on this authenticator: the browser's dialog ends without one.
    await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled: true });
    await page.goto(`${base}/de/signin`);
    await expect(page.textContent('#signin-passkey button')).resolves.toBe('Mit einem Passkey anmelden');
    await page.goto(`${base}/fr/signin`);
    await expect(page.textContent('#signin-passkey button')).resolves.toBe("Se connecter avec une clé d'accès");
    await page.goto(`${base}/en/signin`);
    await page.click('#signin-passkey button');
    await page.waitForSelector('#signin-passkey-error:not([hidden])', { timeout: 20_000 });
    await expect(page.textContent('#signin-passkey-error')).resolves.toBe('No passkey was used. Try again when you are ready.');
    expect(new URL(page.url()).pathname).toBe('/en/signin');
  }, 60_000);
});
