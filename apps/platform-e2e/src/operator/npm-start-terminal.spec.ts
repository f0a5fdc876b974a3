import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, http } from '@trading/testing';
import { startNpmStart, type NpmStart } from '../support/npm-start-process';

/** Lines on the terminal that are JSON (a log line), not meant for a person. */
const jsonLines = (output: string) => output.split('\n').filter((line) => line.trim().startsWith('{'));

/** The data directory's log file, once what the platform logged has been flushed to it (buffered for up to 250 ms). */
async function logFile(platform: NpmStart, until: (lines: Array<Record<string, unknown>>) => boolean) {
  let lines: Array<Record<string, unknown>> = [];
  for (let i = 0; i < 50; i++) {
    lines = readFileSync(join(platform.dataDir, 'platform.log'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    if (until(lines)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return lines;
}

/** `npm start` in a newcomer's terminal: plain lines for a person, the JSON log lines in a file of the data directory. */
describe('npm start: the terminal shows plain lines, the JSON log goes to <PLATFORM_DATA_DIR>/platform.log', () => {
  const started: NpmStart[] = [];
  afterAll(async () => {
    for (const platform of started) await platform.cleanUp();
  });

  it('on every core with Redis: no JSON line at start nor after admin calls; the file has their audit lines', async () => {
    const platform = await startNpmStart();
    started.push(platform);
    const admin = `http://127.0.0.1:${platform.env['AUTH_ADMIN_PORT']}`;
    expect((await http('GET', `${admin}/`, { token: platform.adminToken })).status).toBeLessThan(500);
    expect((await http('GET', `${admin}/admin/users?limit=1`, { token: platform.adminToken })).status).toBe(200);
    expect((await http('GET', `${admin}/admin/users?limit=1`, { token: 'adm_wrong_credential_0123456789' })).status).toBe(401);
    const audit = await logFile(platform, (lines) => lines.filter((line) => line['audit'] === 'admin').length >= 3);
    expect(audit.filter((line) => line['audit'] === 'admin').map((line) => [line['path'], line['status'], line['who']])).toEqual(
      expect.arrayContaining([
        ['/admin/users', 200, expect.stringMatching(/^admin-token:/)],
        ['/admin/users', 401, 'invalid-credential'],
      ]),
    );
    expect(jsonLines(platform.output())).toEqual([]);
    expect(platform.output()).toContain(`Log file      ${join(platform.dataDir, 'platform.log')}`);
  }, 120_000);

  it('without Redis (one process, the in-process store): the notice is one plain line, not a JSON one', async () => {
    const platform = await startNpmStart({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    started.push(platform);
    const notice = platform
      .output()
      .split('\n')
      .filter((line) => /in-process store/.test(line) && !/store: /.test(line));
    expect(notice).toEqual([expect.stringMatching(/^warning \(platform\): .*using an in-process store/)]);
    expect(jsonLines(platform.output())).toEqual([]);
    const logged = await logFile(platform, (lines) => lines.some((line) => /in-process store/.test(String(line['msg']))));
    expect(logged.some((line) => line['level'] === 40 && /in-process store/.test(String(line['msg'])))).toBe(true);
  }, 120_000);

  it('LOG_FORMAT=json: every log line on standard output, as the services write them', async () => {
    const platform = await startNpmStart({ LOG_FORMAT: 'json' });
    started.push(platform);
    const admin = `http://127.0.0.1:${platform.env['AUTH_ADMIN_PORT']}`;
    expect((await http('GET', `${admin}/admin/users?limit=1`, { token: platform.adminToken })).status).toBe(200);
    for (let i = 0; i < 50 && !/"audit":"admin"/.test(platform.output()); i++) await new Promise((r) => setTimeout(r, 100));
    expect(jsonLines(platform.output()).some((line) => /"audit":"admin"/.test(line))).toBe(true);
    expect(platform.output()).not.toContain('Log file');
  }, 120_000);
});
