import { DashboardClient, newUser } from '../support/pat-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

/**
 * Return addresses a phishing link could put in auth's pages (`back` of the language switcher,
 * `next` of sign-in and "Forgot password?"), each of which a browser or our own URL handling
 * could read as another host.
 */
const HOSTILE = [
  '/.//evil.example/x',
  '/%2e//evil.example/x',
  '/%2E%2E//evil.example/x',
  '/en/..//evil.example/x',
  '/en/%2e%2e//evil.example/x',
  '/\\evil.example',
  '\\/evil.example',
  '/%5cevil.example',
  '/%2f/evil.example',
  '//evil.example',
  'https://evil.example',
  'javascript:alert(1)',
  '/\t/evil.example',
  '/\n/evil.example',
];

/**
 * Every page of auth that redirects to an address the request names sends the browser only to a
 * path on auth's own site, written as the browser will read it: a Location that the URL parser
 * would rewrite (`/.//evil.example` becomes `//evil.example`) is an open redirect waiting for
 * the next piece of code that normalises it.
 */
describe('no open redirect from the sign-in site', () => {
  let p: TestPlatform;
  let origin: string;

  beforeAll(async () => {
    p = await startTestPlatform();
    origin = new URL(p.urls.login).origin;
  }, 60_000);
  afterAll(() => p?.stop());

  /** A path on our own origin, exactly as a browser resolves it, and never `//host` or `/\host`. */
  function expectOwnPath(location: string | null, what: string) {
    expect([what, location]).toEqual([what, expect.stringMatching(/^\/(?![/\\])/)]);
    const resolved = new URL(location!, origin);
    expect([what, resolved.origin, resolved.pathname + resolved.search + resolved.hash]).toEqual([what, origin, location]);
    const next = resolved.searchParams.get('next');
    if (next !== null) expectOwnPath(next, `${what} → next`);
  }

  it('the language switcher goes back only to a page of this site, and so does the sign-in it continues to', async () => {
    for (const back of HOSTILE) {
      for (const value of [back, `/en/signin?next=${encodeURIComponent(back)}`]) {
        const res = await fetch(`${p.urls.login}/language/de?back=${encodeURIComponent(value)}`, { redirect: 'manual' });
        expect([value, res.status]).toEqual([value, 303]);
        expectOwnPath(res.headers.get('location'), `back=${JSON.stringify(value)}`);
      }
    }
    // A page of this site is still where the switch leads, in the language chosen.
    const kept = await fetch(`${p.urls.login}/language/de?back=${encodeURIComponent('/en/signin?next=%2Fen%2Fdeveloper')}`, {
      redirect: 'manual',
    });
    expect(kept.headers.get('location')).toBe('/de/signin?next=%2Fde%2Fdeveloper');
  });

  it('signing in continues only to a page of this site', async () => {
    const user = await newUser(p);
    for (const next of HOSTILE) {
      const browser = new DashboardClient(p.urls.login);
      await browser.request('GET', '/en/signin');
      const res = await browser.request('POST', '/en/signin', { _csrf: browser.csrf, email: user.email, password: user.password, next });
      expect([next, res.status]).toEqual([next, 303]);
      expectOwnPath(res.headers.get('location'), `POST next=${JSON.stringify(next)}`);

      // Already signed in: the sign-in page sends the browser straight on.
      const again = await browser.request('GET', `/en/signin?next=${encodeURIComponent(next)}`);
      expect([next, again.status]).toEqual([next, 303]);
      expectOwnPath(again.headers.get('location'), `GET next=${JSON.stringify(next)}`);
    }
    // The dashboard is still where a sign-in continues to.
    const browser = new DashboardClient(p.urls.login);
    await browser.request('GET', '/en/signin');
    const res = await browser.request('POST', '/en/signin', {
      _csrf: browser.csrf,
      email: user.email,
      password: user.password,
      next: '/en/developer',
    });
    expect(res.headers.get('location')).toBe('/en/developer');
  });

  it('the sign-in and "Forgot password?" pages carry no hostile return address into their forms and links', async () => {
    for (const next of HOSTILE) {
      for (const page of ['/en/signin', '/en/forgot-password']) {
        const res = await fetch(`${p.urls.login}${page}?next=${encodeURIComponent(next)}`, { redirect: 'manual' });
        expect([page, next, res.status]).toEqual([page, next, 200]);
        const body = await res.text();
        expect([page, next, /name="next"/.test(body), body.includes('evil.example')]).toEqual([page, next, false, false]);
      }
    }
  });
});
