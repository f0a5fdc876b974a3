import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http } from '@trading/testing';
import { registration } from '../support/oauth-helpers';
import { adminCli, registrationFile } from '../support/admin-cli';
import { inDays, startTestPlatform, type TestPlatform } from '../support/test-platform';

const ROOT = join(__dirname, '../../../..');

/** `npm run admin -- apps …` as the service team runs it, against the running platform's admin API. */
describe('admin CLI: apps, users, PATs', () => {
  let p: TestPlatform;
  const cli = (...args: string[]) => adminCli(p, args);
  /** The CLI with `input` on standard input (a pipe, as in `printf … | npm run admin -- …`). */
  const cliWithInput = (input: string, ...args: string[]) => adminCli(p, args, input);
  const file = registrationFile;

  beforeAll(async () => {
    p = await startTestPlatform();
  }, 60_000);
  afterAll(() => p?.stop());

  it('provisions from a registration file, lists, promotes, rotates and suspends', async () => {
    const bad = await cli(
      'apps',
      'provision',
      '--file',
      file(registration({ country: 'Germany', redirectUris: ['http://vendor.example/cb'] })),
    );
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
    expect(app).toMatchObject({
      environment: 'DEV',
      clientId: expect.stringMatching(/^tci_dev_/),
      clientSecret: expect.stringMatching(/^tcs_/),
      approvedScopes: ['read:accounts'],
    });

    const human = await cli(
      'apps',
      'promote',
      '--app',
      app.appId,
      '--redirect-uri',
      'https://uat.vendor.example/cb',
      '--logo-url',
      'https://cdn.vendor.example/logo.png',
    );
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

  it('creates a user with the password on standard input (never in argv), lists users, and lists and revokes their PATs', async () => {
    const help = await cli('--help');
    expect([help.code, help.stdout]).toEqual([0, expect.stringContaining('admin pat revoke --email <user e-mail> --token-id <tpat_…>')]);
    const email = `cli-${Date.now()}@example.com`;
    const inArgv = await cli(
      'users',
      'create',
      '--email',
      email,
      '--password',
      'a-long-enough-password',
      '--first-name',
      'Cli',
      '--last-name',
      'User',
    );
    expect([inArgv.code, inArgv.stderr]).toEqual([2, expect.stringContaining('lands in shell history')]);
    const created = await cliWithInput(
      'a-long-enough-password\n',
      'users',
      'create',
      '--email',
      email,
      '--first-name',
      'Cli',
      '--last-name',
      'User',
      '--json',
    );
    expect(created.code).toBe(0);
    expect(await p.auth.users.verifyPassword(email, 'a-long-enough-password')).not.toBeNull(); // the newline was not part of it
    const tooShort = await cliWithInput('short', 'users', 'create', '--email', `x${email}`, '--first-name', 'A', '--last-name', 'B');
    expect([tooShort.code, tooShort.stderr]).toEqual([1, expect.stringContaining('password must be at least 12 characters')]);
    expect((await cli('users', 'list')).stdout).toContain(`${email}  Cli User  ${JSON.parse(created.stdout).userId}`);

    const pat = JSON.parse(
      (await cli('pat', 'create', '--email', email, '--name', 'nightly', '--scope', 'READ_ONLY', '--expires', inDays(3), '--json')).stdout,
    );
    const listed = JSON.parse((await cli('pat', 'list', '--email', email, '--json')).stdout);
    expect(listed.tokens).toEqual([
      expect.objectContaining({ tokenId: pat.tokenId, name: 'nightly', scope: 'READ_ONLY', revokedAt: null }),
    ]);
    expect(JSON.stringify(listed)).not.toContain(pat.token.split('.')[1]); // never the secret
    const session = await http('POST', `${p.urls.api}/pat/login`, { body: { token: pat.token } });
    expect(session.status).toBe(200);
    const revoked = await cli('pat', 'revoke', '--email', email, '--token-id', pat.tokenId);
    expect(revoked.stdout).toContain(`revoked ${pat.tokenId} ("nightly")`);
    expect((await http('GET', `${p.urls.api}/accounts`, { token: session.body.token })).status).toBe(401);
    expect((await cli('pat', 'list', '--email', email)).stdout).toMatch(/nightly\s+READ_ONLY\s+valid through \d{4}-\d{2}-\d{2}\s+revoked/);
    const stranger = await cli('pat', 'revoke', '--email', 'nobody@example.com', '--token-id', pat.tokenId);
    expect([stranger.code, stranger.stderr]).toEqual([1, expect.stringContaining('NOT_FOUND')]);
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
      execFile(join(ROOT, 'node_modules/.bin/tsx'), ['tools/admin/cli.ts', 'keys', 'list'], { cwd: ROOT, env }, (err, stdout) =>
        resolve({ code: err ? 1 : 0, stdout }),
      );
    });
    expect(found.code).toBe(0);
    expect(found.stdout).toContain('ACTIVE');
  }, 60_000);
});
