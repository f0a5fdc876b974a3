import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropDatabase, withDatabaseName } from '@trading/db';
import { freePort, http, TEST_POSTGRES_URL, TEST_REDIS_URL, uniqueId } from '@trading/testing';

const ROOT = join(__dirname, '../../../..');
const PORTS = [
  'FACADE_PORT',
  'AUTH_PORT',
  'GATEWAY_PORT',
  'ACCOUNTS_PORT',
  'BANKING_PORT',
  'OMS_PORT',
  'FACADE_INTERNAL_PORT',
  'AUTH_INTERNAL_PORT',
  'GATEWAY_INTERNAL_PORT',
  'ACCOUNTS_INTERNAL_PORT',
  'BANKING_INTERNAL_PORT',
  'OMS_INTERNAL_PORT',
  'AUTH_ADMIN_PORT',
];

/** Pids of `pid`'s children, from /proc (the cluster's workers). */
const childrenOf = (pid: number): number[] => {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
};
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** What `npm start` runs, on every core: a primary and two workers that each run every app on the same ports. */
describe('npm start (all-in-one on every core)', () => {
  const prefix = `t_${uniqueId()}_`;
  let child: ChildProcess;
  let output = '';
  const env: Record<string, string> = {};
  const dataDir = mkdtempSync(join(tmpdir(), 'npm-start-'));

  beforeAll(async () => {
    for (const name of PORTS) env[name] = String(await freePort());
    child = spawn(process.execPath, ['--import', 'tsx', 'apps/platform/src/main.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: process.env['HOME'] ?? '/tmp',
        DATABASE_URL: TEST_POSTGRES_URL.replace(/\/[^/]*$/, ''),
        REDIS_URL: TEST_REDIS_URL,
        PLATFORM_DB_PREFIX: prefix,
        PLATFORM_WORKERS: '2',
        PLATFORM_DATA_DIR: dataDir,
        AUTH_ADMIN_TOKEN: `adm_test_${uniqueId()}_${uniqueId()}`,
        AUTH_KEY_ENCRYPTION_KEY: `kek_test_${uniqueId()}_${uniqueId()}_${uniqueId()}`,
        API_RATE_LIMIT_PER_MINUTE: '0',
        API_ORDER_RATE_LIMIT_PER_MINUTE: '0',
        API_ADDRESS_RATE_LIMIT_PER_MINUTE: '0',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk) => (output += String(chunk)));
    child.stderr!.on('data', (chunk) => (output += String(chunk)));
    for (let i = 0; i < 900 && !output.includes('Ctrl-C stops everything'); i++) {
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    if (!output.includes('Ctrl-C stops everything')) throw new Error(`npm start did not come up:\n${output.slice(-3000)}`);
  }, 120_000);

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    for (const service of ['auth', 'accounts', 'banking', 'oms']) await dropDatabase(withDatabaseName(TEST_POSTGRES_URL, prefix + service));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves the demo PAT of the file the banner names through every layer from both workers, then stops every process on SIGTERM', async () => {
    expect(output).toContain('2 processes, one per core');
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
    // Two processes behind the same port: the facade's /metrics tells them apart by their start time.
    const started = new Set<string>();
    for (let i = 0; i < 8; i++) {
      const metrics = await (
        await fetch(`http://127.0.0.1:${env['FACADE_INTERNAL_PORT']}/metrics`, { headers: { connection: 'close' } })
      ).text();
      started.add(/^process_start_time_seconds\{[^}]*\} (\d+)/m.exec(metrics)![1]!);
    }
    expect(started.size).toBe(2);

    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    for (const pid of workers) expect([pid, alive(pid)]).toEqual([pid, false]);
  }, 60_000);
});
