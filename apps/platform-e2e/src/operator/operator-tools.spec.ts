import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTool } from '../support/admin-cli';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

/** The operator's tools say what they looked at, and read the stream the platform writes. */
describe('operator tools name what they used', () => {
  let p: TestPlatform;
  const dataDir = mkdtempSync(join(tmpdir(), 'operator-tools-'));

  beforeAll(async () => {
    p = await startTestPlatform();
  }, 60_000);
  afterAll(async () => {
    await p?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("the admin CLI's 401 names the credential's source and the admin API's URL", async () => {
    const fromEnv = await runTool('tools/admin/cli.ts', ['users', 'list'], { ADMIN_URL: p.urls.adminApi, ADMIN_TOKEN: 'adm_wrong' });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.stderr).toContain(`the admin API at ${p.urls.adminApi} refused the credential from ADMIN_TOKEN`);

    writeFileSync(join(dataDir, 'admin-token'), 'adm_from_another_installation\n', { mode: 0o600 });
    const fromFile = await runTool('tools/admin/cli.ts', ['users', 'list'], {
      ADMIN_URL: p.urls.adminApi,
      ADMIN_TOKEN: undefined,
      PLATFORM_DATA_DIR: dataDir,
    });
    expect(fromFile.code).toBe(1);
    expect(fromFile.stderr).toContain(`refused the credential from ${join(dataDir, 'admin-token')}`);
  }, 30_000);

  it('dead-letters reads the all-in-one stream by its prefix, and says so when there is no stream at all', async () => {
    // Something on the platform's stream, so it exists (a live order event is as good as any).
    await p.events.log.append(p.events.stream, { eventId: 'operator-tools-1', type: 'order.updated', payload: {} });
    const env = { EVENTS_STREAM: undefined, PLATFORM_DB_PREFIX: p.config.PLATFORM_DB_PREFIX };
    const found = await runTool('tools/settlement/dead-letters.ts', ['list'], env);
    expect(found).toMatchObject({ code: 0, stdout: `no dead letters on ${p.events.stream}\n` });

    const missing = await runTool('tools/settlement/dead-letters.ts', ['list'], { ...env, PLATFORM_DB_PREFIX: 'nothing_here_' });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no settlement stream nothing_here_oms:events');
  }, 30_000);
});
