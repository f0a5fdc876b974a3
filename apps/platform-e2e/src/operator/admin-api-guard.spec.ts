import { http } from '@trading/testing';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

/** The admin listener against a guessing loop on the same host (F8), and its audit trail at the all-in-one's log level (F7). */
describe('admin API: failures budget and audit trail', () => {
  let p: TestPlatform;
  const lines: string[] = [];

  beforeAll(async () => {
    // warn: what the all-in-one runs at, which used to drop every audit line.
    p = await startTestPlatform({ LOG_LEVEL: 'warn' }, { logDestination: { write: (line: string) => void lines.push(line) } });
  }, 60_000);
  afterAll(() => p?.stop());

  const audit = () =>
    lines
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l['audit'] === 'admin');

  it('writes an audit line for an admin call although LOG_LEVEL is warn', async () => {
    const res = await http('GET', `${p.urls.adminApi}/admin/keys`, { token: p.adminToken });
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 400)); // the log buffer flushes
    expect(audit()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ who: expect.stringMatching(/^admin-token:/), method: 'GET', path: '/admin/keys', status: 200 }),
      ]),
    );
    expect(lines.join('')).not.toContain(p.adminToken);
  });

  it('a guessing loop from the same host is refused after the budget, and never locks the real credential out', async () => {
    const wrong = () => http('GET', `${p.urls.adminApi}/admin/keys`, { token: 'adm_a-wrong-guess-00000000000000' });
    // Spend the whole failures budget (default 300 a minute), then go on: 310+ wrong calls in all.
    const first = await wrong();
    expect(first.status).toBe(401);
    const left = Number(first.headers.get('ratelimit-remaining'));
    for (let i = 0; i < left; i++) expect((await wrong()).status).toBe(401);
    for (let i = 0; i < 10; i++) {
      const refused = await wrong();
      expect(refused).toMatchObject({ status: 429, body: { code: 'RATE_LIMITED' } });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    }

    // The real credential, from the same address, in the same minute: served.
    const right = await http('GET', `${p.urls.adminApi}/admin/keys`, { token: p.adminToken });
    expect(right.status).toBe(200);
    expect(right.body.keys.length).toBeGreaterThan(0);

    // Refused calls are audited too.
    await new Promise((r) => setTimeout(r, 400));
    expect(audit().filter((l) => l['who'] === 'invalid-credential' && l['status'] === 429).length).toBeGreaterThan(0);
  }, 120_000);
});
