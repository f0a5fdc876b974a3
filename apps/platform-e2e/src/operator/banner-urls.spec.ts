import { http } from '@trading/testing';
import { DEMO_VENDOR_APP, LISTENER_PORTS } from '@trading/platform';
import { startNpmStart, type NpmStart } from '../support/npm-start-process';

/** What a browser sends for an address typed into it (Chromium's Accept), from a German-speaking person. */
const BROWSER = {
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8',
  'accept-language': 'de-DE,de;q=0.9,en;q=0.8',
};

/** The sample vendor app's own addresses: they answer once `npm run sample-vendor` runs, as the banner says (sample-vendor.browser.spec). */
const SAMPLE_VENDOR = new Set(['http://localhost:3000', ...DEMO_VENDOR_APP.registration.redirectUris]);

/** Every http(s) address in `text`, without the punctuation of the sentence around it. */
const addressesIn = (text: string) => [...text.matchAll(/https?:\/\/[^\s'"()]+/g)].map((m) => m[0].replace(/[.,;:…?]+$/, ''));

/** What a newcomer does first after `npm start`: open what the banner printed, in a browser. */
describe('the addresses npm start prints', () => {
  let platform: NpmStart;
  let banner: string;
  beforeAll(async () => {
    platform = await startNpmStart();
    banner = platform.output().slice(platform.output().indexOf('Trading API platform is running'));
  }, 120_000);
  afterAll(() => platform?.cleanUp());

  it('opens a page or a document for every address the banner prints (commands aside), following redirects as a browser does', async () => {
    // The shell commands' addresses are for curl (a POST, a call with a token); everything else is for a browser.
    const printed = new Set(
      banner
        .split('\n')
        .filter((line) => !/\bcurl\b/.test(line))
        .flatMap(addressesIn),
    );
    const platformPorts = new Set(LISTENER_PORTS.map((name) => platform.env[name]));
    const foreign = [...printed].filter((url) => !platformPorts.has(new URL(url).port));
    expect(foreign.filter((url) => !SAMPLE_VENDOR.has(url))).toEqual([]);
    const ours = [...printed].filter((url) => platformPorts.has(new URL(url).port));
    expect(ours.length).toBeGreaterThanOrEqual(7);

    // Each answer as a person sees it: a page by its title, a document by its type.
    const answers: Array<{ url: string; status: number; what: string; useful: boolean }> = [];
    for (const url of ours) {
      const res = await fetch(url, { headers: BROWSER });
      const type = (res.headers.get('content-type') ?? '').split(';')[0]!;
      const title = /<title>([^<]+)<\/title>/.exec(await res.text())?.[1];
      const what = type === 'text/html' ? (title ?? 'a page without a title') : type;
      answers.push({
        url,
        status: res.status,
        what,
        useful: res.status === 200 && ((type === 'text/html' && !!title) || type === 'application/json'),
      });
    }
    expect(answers.filter((a) => !a.useful)).toEqual([]);
    // What each one is, as a newcomer sees it.
    const at = (path: string) => answers.find((a) => a.url.endsWith(path))?.what;
    expect(at(`:${platform.env['AUTH_PORT']}`)).toMatch(/Willkommen/);
    expect(at('/v1')).toMatch(/Trading API/);
    expect(at('/docs')).toBe('Trading API docs');
    expect(at('/v1/openapi.json')).toBe('application/json');
    expect(at('/en/developer')).toMatch(/^Sign in/); // the dashboard asks to sign in first
    expect(at('/graphql')).toMatch(/GraphQL explorer/);
    // The subgraphs' internal listeners (signed claims only) are not printed.
    for (const name of ['ACCOUNTS_INTERNAL_PORT', 'BANKING_INTERNAL_PORT', 'OMS_INTERNAL_PORT'] as const)
      expect(banner).not.toContain(`:${platform.env[name]}`);
  });

  it('the login origin: a front page in the browser’s language, with the page headers, linking to sign-in, the dashboard and the API docs', async () => {
    const login = `http://localhost:${platform.env['AUTH_PORT']}`;
    const pick = await fetch(`${login}/`, { headers: BROWSER, redirect: 'manual' });
    expect([pick.status, pick.headers.get('location')]).toEqual([302, '/de/']);
    expect(pick.headers.get('vary')).toMatch(/Accept-Language/);
    expect(
      (await fetch(`${login}/`, { headers: { ...BROWSER, 'accept-language': 'fr' }, redirect: 'manual' })).headers.get('location'),
    ).toBe('/fr/');
    // The language chosen with the switcher wins over Accept-Language.
    expect((await fetch(`${login}/`, { headers: { ...BROWSER, cookie: 'lang=en' }, redirect: 'manual' })).headers.get('location')).toBe(
      '/en/',
    );

    const page = await fetch(`${login}/de/`, { headers: BROWSER });
    const body = await page.text();
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(body).toContain('<html lang="de">');
    const links = [...body.matchAll(/<a href="([^"]+)" id="home-(\w+)"/g)].map((m) => [m[2], m[1]]);
    const docs = `http://localhost:${platform.env['FACADE_PORT']}/docs`;
    expect(links).toEqual([
      ['signin', '/de/signin'],
      ['dashboard', '/de/developer'],
      ['docs', docs],
    ]);
    for (const [, href] of links) expect([href, (await fetch(new URL(href!, login), { headers: BROWSER })).status]).toEqual([href, 200]);
    // A locale the site does not have is still no page.
    expect((await fetch(`${login}/es/`, { headers: BROWSER })).status).toBe(404);
  });

  it('{base_url}: an index of the API, JSON for a program and a page for a browser, before any token', async () => {
    const api = platform.api;
    const facade = api.replace(/\/v1$/, '');
    for (const path of ['/v1', '/v1/']) {
      const index = await http('GET', `${facade}${path}`);
      expect([path, index.status, index.body]).toEqual([
        path,
        200,
        {
          name: 'Trading API',
          version: expect.any(String),
          links: {
            docs: `${facade}/docs`,
            openapi: `${api}/openapi.json`,
            patLogin: `${api}/pat/login`,
            oauthAuthorize: `${api}/oauth/authorize`,
            oauthToken: `${api}/oauth/token`,
          },
        },
      ]);
    }
    // curl's Accept (*/*) gets the JSON too.
    expect((await fetch(api, { headers: { accept: '*/*' } })).headers.get('content-type')).toMatch(/^application\/json/);
    const page = await fetch(api, { headers: BROWSER });
    const body = await page.text();
    expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    expect(page.headers.get('vary')).toMatch(/Accept/);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(body).toContain(`href="${facade}/docs"`);
    expect(body).toContain(`href="${api}/openapi.json"`);
  });

  it('/healthz on every port the platform listens on, /readyz on all but the admin API’s, as the banner says', async () => {
    expect(banner).toContain('/healthz on every port, /readyz on all but the admin API');
    for (const name of LISTENER_PORTS) {
      const base = `http://127.0.0.1:${platform.env[name]}`;
      const health = await http('GET', `${base}/healthz`);
      expect([name, health.status, health.body.status]).toEqual([name, 200, 'ok']);
      if (name !== 'AUTH_ADMIN_PORT') expect([name, (await http('GET', `${base}/readyz`)).status]).toEqual([name, 200]);
    }
  });
});
