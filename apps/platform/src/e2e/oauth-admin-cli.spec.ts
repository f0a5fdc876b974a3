import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registration } from './oauth-helpers';
import { startTestPlatform, type TestPlatform } from './test-platform';

const ROOT = join(__dirname, '../../../..');

/** `npm run admin -- apps …` as the service team runs it, against the running platform's admin API. */
describe('admin CLI: apps', () => {
  let p: TestPlatform;
  const cli = (...args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(join(ROOT, 'node_modules/.bin/tsx'), ['tools/admin/cli.ts', ...args], { cwd: ROOT, env: { ...process.env, ADMIN_URL: p.urls.adminApi, ADMIN_TOKEN: p.adminToken } }, (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  const file = (doc: unknown) => {
    const path = join(tmpdir(), `registration-${process.pid}-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(path, JSON.stringify(doc));
    return path;
  };

  beforeAll(async () => {
    p = await startTestPlatform();
  }, 60_000);
  afterAll(() => p?.stop());

  it('provisions from a registration file, lists, promotes, rotates and suspends', async () => {
    const bad = await cli('apps', 'provision', '--file', file(registration({ country: 'Germany', redirectUris: ['http://vendor.example/cb'] })));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('nothing was created');
    expect(bad.stderr).toContain('country: must be a 2-letter ISO 3166-1 country code');
    expect(bad.stderr).toContain('redirectUris[0]: must use https');
    expect(bad.stderr).toContain('tools/admin/registration.example.json');

    // The shipped template is a complete, valid registration.
    const template = await cli('apps', 'provision', '--file', join(ROOT, 'tools/admin/registration.example.json'), '--json');
    expect(template.code).toBe(0);
    expect(JSON.parse(template.stdout)).toMatchObject({ appName: 'Example Portfolio Tracker', environment: 'DEV' });

    const created = await cli('apps', 'provision', '--file', file(registration()), '--approve-scopes', 'read:accounts', '--json');
    expect(created.code).toBe(0);
    const app = JSON.parse(created.stdout);
    expect(app).toMatchObject({ environment: 'DEV', clientId: expect.stringMatching(/^tci_dev_/), clientSecret: expect.stringMatching(/^tcs_/), approvedScopes: ['read:accounts'] });

    const human = await cli('apps', 'promote', '--app', app.appId, '--redirect-uri', 'https://uat.vendor.example/cb', '--logo-url', 'https://cdn.vendor.example/logo.png');
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/promoted "E2E Portfolio App" .* in UAT[\s\S]*client_secret {2}tcs_/);
    const skipped = await cli('apps', 'promote', '--app', app.clientId, '--to', 'UAT', '--redirect-uri', 'https://vendor.example/prod');
    expect(skipped.code).toBe(1);
    expect(skipped.stderr).toContain('can be promoted to PROD only');

    const listed = JSON.parse((await cli('apps', 'list', '--json')).stdout);
    const entry = listed.apps.find((a: { appId: string }) => a.appId === app.appId);
    expect(entry.environments.map((e: { environment: string }) => e.environment)).toEqual(['DEV', 'UAT']);

    const rotated = JSON.parse((await cli('apps', 'rotate-secret', '--app', app.appId, '--env', 'UAT', '--json')).stdout);
    expect(rotated).toMatchObject({ environment: 'UAT', clientSecret: expect.stringMatching(/^tcs_/) });
    const suspended = await cli('apps', 'suspend', '--app', app.clientId);
    expect(suspended.stdout).toContain('suspended "E2E Portfolio App"');
  }, 60_000);

  it('lists, rotates and retires signing keys; finds the credential the platform generated when ADMIN_TOKEN is unset', async () => {
    const before = JSON.parse((await cli('keys', 'list', '--json')).stdout).keys as Array<{ kid: string; status: string }>;
    const active = before.find((k) => k.status === 'ACTIVE')!;
    const rotated = await cli('keys', 'rotate');
    expect(rotated.stdout).toMatch(/new signing key .* is active/);
    expect((await cli('keys', 'retire')).stderr).toContain('missing --kid');
    const retired = await cli('keys', 'retire', '--kid', active.kid);
    expect(retired.code).toBe(0);
    expect(retired.stdout).toContain(`retired signing key ${active.kid}`);
    expect((await cli('keys', 'list')).stdout).toMatch(new RegExp(`${active.kid} +RETIRED`));

    // No ADMIN_TOKEN: the CLI reads <PLATFORM_DATA_DIR>/admin-token, as after `npm start`.
    const dir = mkdtempSync(join(tmpdir(), 'cli-data-'));
    writeFileSync(join(dir, 'admin-token'), `${p.adminToken}\n`, { mode: 0o600 });
    const found = await new Promise<{ code: number; stdout: string }>((resolve) => {
      const env: NodeJS.ProcessEnv = { ...process.env, ADMIN_URL: p.urls.adminApi, PLATFORM_DATA_DIR: dir };
      delete env['ADMIN_TOKEN'];
      execFile(join(ROOT, 'node_modules/.bin/tsx'), ['tools/admin/cli.ts', 'keys', 'list'], { cwd: ROOT, env }, (err, stdout) => resolve({ code: err ? 1 : 0, stdout }));
    });
    expect(found.code).toBe(0);
    expect(found.stdout).toContain('ACTIVE');
  }, 60_000);
});
