import { startTestPlatform, type TestPlatform } from '../support/test-platform';

/** A person never gets a JSON 404 for a locale spelled another way; French is there too. */
describe('page locales', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform();
  }, 60_000);
  afterAll(() => p?.stop());

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${p.urls.login}${path}`, { redirect: 'manual', headers });

  it('serves the sign-in page in French', async () => {
    const page = await get('/fr/signin');
    expect(page.status).toBe(200);
    const body = await page.text();
    expect(body).toContain('Se connecter');
    expect(body).toContain('lang="fr"');
  });

  it('negotiates a locale from the path, then ui_locales, then Accept-Language, then English, keeping the query', async () => {
    const cases: Array<[string, Record<string, string>, string]> = [
      ['/en-US/signin?next=%2Fen%2Fdeveloper', {}, '/en/signin?next=%2Fen%2Fdeveloper'],
      ['/EN/signin', {}, '/en/signin'],
      ['/de_CH/signin', {}, '/de/signin'],
      ['/es/signin?ui_locales=fr', {}, '/fr/signin?ui_locales=fr'],
      ['/es/signin', { 'accept-language': 'es-ES, de;q=0.8, en;q=0.5' }, '/de/signin'],
      ['/pt/signin', {}, '/en/signin'],
    ];
    for (const [path, headers, location] of cases) {
      const res = await get(path, headers);
      expect([path, res.status, res.headers.get('location')]).toEqual([path, 302, location]);
    }
  });
});
