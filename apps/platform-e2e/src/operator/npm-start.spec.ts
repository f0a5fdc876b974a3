import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { http, sampleValue } from '@trading/testing';
import { alive, childrenOf, startNpmStart, type NpmStart } from '../support/npm-start-process';

/** What `npm start` runs, on every core: a primary and two workers that each run every app on the same ports. */
describe('npm start (all-in-one on every core)', () => {
  let platform: NpmStart;

  beforeAll(async () => {
    platform = await startNpmStart();
  }, 120_000);
  afterAll(() => platform?.cleanUp());

  it('serves the demo PAT of the file the banner names through every layer from both workers, then stops every process on SIGTERM', async () => {
    const { child, env, dataDir } = platform;
    const output = platform.output();
    expect(output).toContain('2 processes, one per core');
    // Not ready while starting, wherever the connection landed: the first worker listens while the second still starts.
    const beforeBanner = platform.readinessWhileStarting.filter((probe) => probe.at < platform.bannerAt - 500);
    expect(beforeBanner.filter((probe) => probe.status === 200)).toEqual([]);
    expect(beforeBanner.some((probe) => probe.status === 503)).toBe(true);
    expect((await fetch(`http://127.0.0.1:${env['FACADE_PORT']}/readyz`, { headers: { connection: 'close' } })).status).toBe(200);
    const workers = childrenOf(child.pid!);
    expect(workers).toHaveLength(2);

    // The banner names the credentials file and prints no secret: stdout ends up in terminals, CI logs and screenshots.
    const file = /Demo secrets\s+(\S+)/.exec(output)![1]!;
    expect(file).toBe(join(dataDir, 'demo-credentials.json'));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const { pat, clientSecret } = JSON.parse(readFileSync(file, 'utf8')) as { pat: string; clientSecret: string };
    expect(pat).toMatch(/^tpat_/);
    expect(clientSecret).toMatch(/^tcs_[A-Za-z0-9_-]{43}$/);
    expect(output).not.toContain(pat);
    expect(output).not.toContain(pat.split('.')[1]);
    expect(output).not.toContain(clientSecret);
    expect(output).not.toMatch(/tpat_[0-9A-Za-z]{16}\.[0-9A-Za-z]/);

    const api = `http://localhost:${env['FACADE_PORT']}/v1`;
    const login = await http('POST', `${api}/pat/login`, { body: { token: pat } });
    expect(login.status).toBe(200);
    // New connections go to the workers in turn: both answer, with the same data.
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        fetch(`${api}/accounts`, { headers: { authorization: `Bearer ${login.body.token}`, connection: 'close' } }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(200));
    const bodies = new Set(await Promise.all(answers.map((r) => r.text())));
    expect(bodies.size).toBe(1);
    // Two processes behind the same port, and the facade's /metrics answers for both wherever a scrape lands:
    // the 8 reads whichever worker served them (npm-start-metrics.spec scrapes it 20 times).
    for (let i = 0; i < 2; i++) {
      const metrics = (
        await (await fetch(`http://127.0.0.1:${env['FACADE_INTERNAL_PORT']}/metrics`, { headers: { connection: 'close' } })).text()
      ).split('\n');
      expect(sampleValue(metrics, 'platform_workers', { service: 'rest-facade' })).toBe(2);
      expect(sampleValue(metrics, 'http_request_duration_seconds_count', { listener: 'public', route: '/accounts', status: '200' })).toBe(
        8,
      );
    }

    // Quiet by default: routine refusals (a favicon, a wrong token) are not the operator's to read.
    expect((await fetch(`http://localhost:${env['FACADE_PORT']}/favicon.ico`)).status).toBe(404);
    expect((await http('GET', `${api}/accounts`, { token: 'not-a-token' })).status).toBe(401);
    await new Promise((r) => setTimeout(r, 200));
    expect(platform.output()).not.toContain('request completed');

    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(
      platform
        .output()
        .split('\n')
        .filter((line) => /"level":(50|60)|^(error|fatal) \(/.test(line)),
    ).toEqual([]); // a clean stop says nothing alarming
    for (const pid of workers) expect([pid, alive(pid)]).toEqual([pid, false]);
  }, 60_000);
});
