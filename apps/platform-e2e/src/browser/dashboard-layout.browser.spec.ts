import type { Browser, BrowserContext, Page } from 'playwright-core';
import { fitsWidth, launchChromium, MEASURE_TABLE_WORDS, screenshot, WIDTHS } from '../support/browser-pages';
import { newUser, patLogin, utcDate } from '../support/pat-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

/** What MEASURE_TABLE_WORDS reports. */
interface Measured {
  broken: string[];
  overflowing: string[];
  fits: boolean;
}

/**
 * In Chromium: the dashboard's tables fit every width from a phone to a wide
 * screen without a word broken in the middle; a new token is shown once after a redirect (a
 * reload neither resubmits nor shows it again); dates read as chosen; validation speaks French.
 */
describe('the dashboard in a browser: layout, dates, post/redirect/get', () => {
  let p: TestPlatform;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let user: { id: string; email: string; password: string };

  async function signIn(locale = 'en') {
    await page.goto(`${p.urls.login}/${locale}/signin`);
    await page.fill('#email', user.email);
    await page.fill('#password', user.password);
    await Promise.all([page.waitForURL(new RegExp(`/${locale}/developer$`)), page.click('form button[type=submit]')]);
  }

  const tokenCount = async () =>
    Number((await p.auth.dataSource.query('SELECT count(*)::int AS n FROM personal_access_tokens WHERE user_id = $1', [user.id]))[0].n);

  beforeAll(async () => {
    p = await startTestPlatform();
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(8000);
    user = await newUser(p);
    // Content that stretches a table: long names with spaces, address lists, a revoked token, logins with a long user agent.
    const long = await p.auth.pats.create({
      userId: user.id,
      name: 'nightly portfolio reconciliation report for the compliance team',
      access: 'READ_WRITE',
      expires: utcDate(200),
      ipAllowlist: ['203.0.113.7', '198.51.100.0/24', '2001:db8:85a3::8a2e:370:7334', '127.0.0.1', '::1'],
    });
    const short = await p.auth.pats.create({ userId: user.id, name: 'ci', access: 'READ_ONLY', expires: utcDate(3) });
    await p.auth.pats.create({ userId: user.id, name: 'old laptop script', access: 'READ_ONLY', expires: utcDate(30) });
    const agent = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) reporting-bot/2.4.1';
    expect((await patLogin(p.urls.api, long.token, { 'user-agent': agent })).status).toBe(200);
    expect((await patLogin(p.urls.api, short.token, { 'user-agent': 'curl/8.5.0' })).status).toBe(200);
    await p.auth.pats.revoke(user.id, short.pat.id);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await p?.stop();
  });

  it('creates a token with post/redirect/get: shown once, a reload neither resubmits nor shows it again', async () => {
    await signIn();
    const before = await tokenCount();
    // The expiry is a text field in ISO form, never the browser's mm/dd/yyyy.
    await expect(page.getAttribute('#expires', 'type')).resolves.toBe('text');
    await expect(page.getAttribute('#expires', 'placeholder')).resolves.toBe('YYYY-MM-DD');
    const chosen = utcDate(40);
    await page.fill('#name', 'valid through the chosen day');
    await page.fill('#expires', chosen);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/en/developer/tokens') && r.request().method() === 'POST'),
      page.click('#create-token button[type=submit]'),
    ]);
    expect(response.status()).toBe(303);
    await page.waitForSelector('#new-token-panel');
    expect(new URL(page.url()).pathname).toBe('/en/developer');
    const token = await page.inputValue('#new-token');
    expect(token).toMatch(/^tpat_/);
    expect(await tokenCount()).toBe(before + 1);

    // The day chosen is the day shown (not the instant after it).
    const row = page.locator(`tr[data-token-id="${token.split('.')[0]}"]`);
    await expect(row.locator('td.day').textContent()).resolves.toBe(chosen);

    // A reload is a GET of the dashboard: nothing is created, the token is not shown again.
    let dialogs = 0;
    page.on('dialog', (d) => {
      dialogs++;
      void d.dismiss();
    });
    await page.reload();
    expect(dialogs).toBe(0);
    expect(await page.locator('#new-token-panel').count()).toBe(0);
    expect(await page.content()).not.toContain(token);
    expect(await tokenCount()).toBe(before + 1);
  });

  /** form.submit() skips the page's own checks (as a script-less browser would); waits for the server's page. */
  async function submitPastTheScript() {
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/developer/tokens') && r.request().method() === 'POST'),
      page.evaluate("document.getElementById('create-token').submit()"),
    ]);
    await page.waitForLoadState('load');
  }

  it('says what is wrong in French, in the page and from the server, without field names', async () => {
    await page.goto(`${p.urls.login}/fr/developer`);
    await page.fill('#name', 'rapport');
    await page.fill('#expires', utcDate(10));
    await page.fill('#ips', '10.0.0.1, nonsense');
    await page.click('#create-token button[type=submit]');
    const inPage = await page.textContent('[data-error-for=ips]');
    expect(inPage).toBe(
      '« nonsense » n’est ni une adresse IP ni une plage d’adresses. Écrivez des adresses comme 203.0.113.7 ou 2001:db8::1, ou des plages comme 10.0.0.0/8.',
    );
    expect(new URL(page.url()).pathname).toBe('/fr/developer'); // nothing was sent
    // Without the page's check (a forged or script-less post), the server answers the same sentence.
    await submitPastTheScript();
    await expect(page.textContent('#error-ips')).resolves.toBe(inPage);
    await page.fill('#ips', '');
    await page.fill('#expires', '31/01/2027');
    await submitPastTheScript();
    await expect(page.textContent('#error-expires')).resolves.toBe('Écrivez la date sous la forme AAAA-MM-JJ, par exemple 2027-01-31.');
    await page.screenshot({ path: await screenshot(page, 'dashboard-fr-error') });
  });

  const widths = [375, 414, 600, 640, 768, 900, 1024, 1199, 1200, 1280, 1440, 1920];
  for (const locale of ['en', 'de', 'fr']) {
    it(`fits every width from 375 to 1920 px without breaking a word (${locale})`, async () => {
      const failures: Array<{ width: number } & Measured> = [];
      for (const width of widths) {
        await page.setViewportSize({ width, height: 900 });
        await page.goto(`${p.urls.login}/${locale}/developer`);
        const measured = (await page.evaluate(MEASURE_TABLE_WORDS)) as Measured;
        if (measured.broken.length || measured.overflowing.length || !measured.fits) failures.push({ width, ...measured });
        if ((WIDTHS as readonly number[]).includes(width)) await screenshot(page, `dashboard-${locale}`);
      }
      expect(failures).toEqual([]);
      // Cards on a phone (each cell labelled), a table with its header row on a wide screen.
      const headerRow = "getComputedStyle(document.querySelector('#tokens thead')).position";
      await page.setViewportSize({ width: 375, height: 900 });
      await page.goto(`${p.urls.login}/${locale}/developer`);
      await expect(page.evaluate(headerRow)).resolves.toBe('absolute'); // kept for screen readers only
      await page.setViewportSize({ width: 1920, height: 900 });
      await page.goto(`${p.urls.login}/${locale}/developer`);
      // English fits as a table at 1920 px; a longer language may still need cards there (the script decides, the page fits either way).
      if (locale === 'en') await expect(page.evaluate(headerRow)).resolves.toBe('static');
      expect(await fitsWidth(page)).toBe(true);
    });
  }
});
