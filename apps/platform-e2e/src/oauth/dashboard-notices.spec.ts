import { DashboardClient, newUser } from '../support/pat-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

/** A cookie value decodeURIComponent throws on, which a sibling domain can plant for the auth host. */
const MALFORMED = '%E0%A4%A';

/** The auth pages against a planted malformed cookie (F12) and notices an attacker writes into a link (F11). */
describe('dashboard notices and malformed cookies', () => {
  let p: TestPlatform;

  beforeAll(async () => {
    p = await startTestPlatform();
  }, 60_000);
  afterAll(() => p?.stop());

  const get = (path: string, cookie: string) => fetch(p.urls.login + path, { redirect: 'manual', headers: { cookie } });
  const cookieOf = (res: Response, name: string) =>
    res.headers
      .getSetCookie()
      .map((line) => line.split(';')[0]!)
      .find((pair) => pair.startsWith(`${name}=`))
      ?.slice(name.length + 1);

  it('a malformed planted cookie leaves the sign-in and dashboard pages working, and a sign-in still succeeds', async () => {
    const user = await newUser(p);
    const signinPage = await get('/en/signin', `tapi_csrf=${MALFORMED}`);
    expect(signinPage.status).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await signinPage.text())![1]!;
    expect(cookieOf(signinPage, 'tapi_csrf')).toBe(csrf); // treated as absent: a fresh one is issued

    const dashboard = await get('/en/developer', `tapi_session=${MALFORMED}; tapi_csrf=${MALFORMED}`);
    expect(dashboard.status).toBe(303);
    expect(dashboard.headers.get('location')).toMatch(/^\/en\/signin\?next=/);

    // The planted copy stays in the browser beside the real one (another domain set it): sign-in still works.
    const signIn = await fetch(`${p.urls.login}/en/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: `tapi_csrf=${MALFORMED}; tapi_csrf=${csrf}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, email: user.email, password: user.password }),
    });
    expect(signIn.status).toBe(303);
    const session = cookieOf(signIn, 'tapi_session')!;
    expect(session).toBeTruthy();
    const signedIn = await get('/en/developer', `tapi_session=${MALFORMED}; tapi_session=${session}`);
    expect(signedIn.status).toBe(200);
    expect(await signedIn.text()).toContain(user.email);
  });

  it('text in the dashboard URL is never shown as a notice; revoking a token shows its notice once, from the server', async () => {
    const user = await newUser(p);
    const browser = new DashboardClient(p.urls.login);
    expect((await browser.signIn(user.email, user.password)).status).toBe(303);

    // The attack: a link into the real dashboard carrying the attacker's words.
    const bait = 'Your account is locked. Call +1-555-0100 to unlock it';
    for (const param of ['revoked', 'app-revoked']) {
      const page = await browser.request('GET', `/en/developer?${param}=${encodeURIComponent(bait)}`);
      expect(page.status).toBe(200);
      expect(page.body).not.toContain('Call +1-555-0100');
      expect(page.body).not.toContain('id="notice"');
    }

    const created = await browser.createToken({ name: 'to revoke' });
    const tokenId = created.token!.split('.')[0]!;
    await browser.request('GET', '/en/developer');
    const revoked = await browser.revoke(tokenId);
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get('location')).toBe('/en/developer');

    const next = await browser.request('GET', '/en/developer');
    expect(next.body).toMatch(new RegExp(`id="notice">Token ${tokenId} is revoked`));
    const reload = await browser.request('GET', '/en/developer');
    expect(reload.body).not.toContain('id="notice"');
  });
});
