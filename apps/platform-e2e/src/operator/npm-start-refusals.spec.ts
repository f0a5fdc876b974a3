import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@trading/testing';
import { claimDataDir } from '@trading/platform';
import { startNpmStart, type NpmStart } from '../support/npm-start-process';

/** What a newcomer sees when a port the platform needs is taken: one line naming it and the setting that moves it. */
describe('npm start with a port taken', () => {
  let squatter: Server;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    squatter = createServer();
    await new Promise<void>((done) => squatter.listen(port, '127.0.0.1', done));
  });
  afterAll(() => new Promise<void>((done) => squatter.close(() => done())));

  it('refuses at once in at most two lines, naming the port and FACADE_PORT, with no stack trace or JSON log line', async () => {
    const failed = await startNpmStart({ FACADE_PORT: String(port) }).then(
      () => undefined,
      (err: Error) => err.message,
    );
    expect(failed).toBeDefined();
    const printed = failed!
      .replace(/^npm start did not come up:\n/, '')
      .trim()
      .split('\n');
    expect(printed.length).toBeLessThanOrEqual(2);
    expect(printed.join('\n')).toContain(`${port} (FACADE_PORT)`);
    expect(printed.join('\n')).toContain('FACADE_PORT=<free port> npm start');
    expect(printed.join('\n')).not.toMatch(/EADDRINUSE|"level":|^\s+at /m);
  }, 60_000);
});

describe('npm start on a data directory another copy is using', () => {
  let first: NpmStart | undefined;
  afterAll(async () => {
    first?.child.kill('SIGTERM');
    await first?.cleanUp();
  });

  it('refuses the second copy in one line naming PLATFORM_DATA_DIR; the first keeps serving', async () => {
    first = await startNpmStart();
    const failed = await startNpmStart({ PLATFORM_DATA_DIR: first.dataDir }).then(
      () => undefined,
      (err: Error) => err.message,
    );
    expect(failed).toContain(
      `The data directory ${first.dataDir} is in use by another running copy of the platform (pid ${first.child.pid})`,
    );
    expect(failed).toContain('PLATFORM_DATA_DIR=<another folder>');
    expect(readFileSync(join(first.dataDir, 'platform.pid'), 'utf8').trim()).toBe(String(first.child.pid));
    expect((await fetch(`${first.api.replace(/\/v1$/, '')}/readyz`)).status).toBe(200);
  }, 120_000);

  it('takes over the claim a copy that died left behind (a pid nobody runs)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'data-dir-lock-'));
    try {
      writeFileSync(join(dir, 'platform.pid'), '999999999\n');
      claimDataDir(dir);
      expect(readFileSync(join(dir, 'platform.pid'), 'utf8').trim()).toBe(String(process.pid));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
