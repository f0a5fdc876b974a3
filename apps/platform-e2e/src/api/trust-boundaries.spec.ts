import { randomUUID } from 'node:crypto';
import { chmodSync, lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { ConfigError } from '@trading/config';
import { listen } from '@trading/service';
import { http } from '@trading/testing';
import { ensureAdminToken, loadPlatformConfig } from '@trading/platform';
import { extraAuth, refusalCounts } from '../support/oauth-helpers';
import { newUser, patLogin } from '../support/pat-helpers';
import { inDays, startTestPlatform, type TestPlatform } from '../support/test-platform';

/** What the all-in-one platform exposes, and to whom, and which client address it believes. */
describe('trust boundaries of the running platform', () => {
  let p: TestPlatform;

  beforeAll(async () => {
    p = await startTestPlatform();
  });
  afterAll(async () => {
    await p?.stop();
  });

  it('attack: the admin credential mints nothing on any public listener; the admin API answers only on its own loopback listener', async () => {
    const user = await newUser(p);
    const body = { email: user.email, name: 'stolen', scope: 'READ_WRITE', expires: inDays(5) };
    for (const url of [
      `${p.urls.login}/admin/pats`,
      `${p.urls.api}/admin/pats`,
      `${p.urls.gateway.replace(/\/graphql$/, '')}/admin/pats`,
    ]) {
      const res = await http('POST', url, { token: p.adminToken, body });
      expect([401, 404]).toContain(res.status);
      expect(res.body?.token).toBeUndefined();
    }
    expect(new URL(p.urls.adminApi).hostname).toBe('127.0.0.1');
    expect((await http('POST', `${p.urls.adminApi}/admin/pats`, { token: p.adminToken, body })).status).toBe(201);
  });

  it('attack: nothing answers on another address of this machine (the platform binds 127.0.0.1)', async () => {
    const reach = (host: string, port: number) =>
      new Promise<string>((resolve) => {
        const socket = connect({ host, port, timeout: 2000 }, () => {
          socket.destroy();
          resolve('connected');
        });
        socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
        socket.on('timeout', () => {
          socket.destroy();
          resolve('timeout');
        });
      });
    // Every IPv4 address of the machine's interfaces, and 127.0.0.2: on Linux the whole of
    // 127.0.0.0/8 is this machine, so a machine with loopback only still has another address.
    const candidates = [
      '127.0.0.2',
      ...Object.values(networkInterfaces())
        .flat()
        .filter((a) => a && a.family === 'IPv4' && !a.internal)
        .map((a) => a!.address),
    ];
    // A listener on every address shows which of them this test can reach at all.
    const control = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => control.listen(0, '0.0.0.0', resolve));
    const reachable: string[] = [];
    try {
      const { port } = control.address() as AddressInfo;
      for (const host of candidates) if ((await reach(host, port)) === 'connected') reachable.push(host);
    } finally {
      await new Promise((resolve) => control.close(resolve));
    }
    expect(reachable.length).toBeGreaterThan(0);
    const ports = [p.urls.api, p.urls.login, p.urls.gateway, p.urls.adminApi, ...Object.values(p.internalUrls)].map((u) =>
      Number(new URL(u).port),
    );
    for (const host of reachable) for (const port of ports) expect(`${host}:${port} ${await reach(host, port)}`).not.toMatch(/ connected$/);
  });

  it("attack: a local process cannot borrow a PAT's allowed address with X-Forwarded-For, nor with a client address it signed itself", async () => {
    const user = await newUser(p);
    const { token } = await p.auth.pats.create({
      userId: user.id,
      name: 'office only',
      access: 'READ_ONLY',
      expires: inDays(5),
      ipAllowlist: ['203.0.113.7'],
    });
    const forwarded = { 'x-forwarded-for': '203.0.113.7' };
    expect((await patLogin(p.urls.login, token, forwarded)).status).toBe(401);
    expect((await patLogin(p.urls.authInternal, token, forwarded)).status).toBe(401);
    // Only the facade's signature on the address counts.
    const byOms = await p.signerFor('oms').signClientAddress('203.0.113.7', 'auth');
    expect((await patLogin(p.urls.authInternal, token, { 'x-internal-client-address': byOms })).status).toBe(401);
    const byFacade = await p.signerFor('rest-facade').signClientAddress('203.0.113.7', 'auth');
    expect((await patLogin(p.urls.login, token, { 'x-internal-client-address': byFacade })).status).toBe(401); // dropped by the public listener
    expect((await patLogin(p.urls.authInternal, token, { 'x-internal-client-address': byFacade })).status).toBe(200);
  });

  it('audits every admin API call (refused ones too) without the credential, and limits callers per address', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const {
      app: auth,
      internalUrl,
      close,
    } = await extraAuth(
      p,
      { AUTH_ADMIN_TOKEN: `adm_${randomUUID()}`, AUTH_ADMIN_MAX_REQUESTS_PER_MINUTE: 3 },
      p.store,
      pino({ level: 'info' }, sink),
    );
    const admin = await listen(auth.admin!, 0, '127.0.0.1');
    try {
      const res = await http('POST', `${admin.url}/admin/users`, { token: 'a-wrong-admin-credential-0000', body: {} });
      expect(res.status).toBe(401);
      await new Promise((r) => setTimeout(r, 50));
      const audit = lines.map((l) => JSON.parse(l)).filter((l) => l.audit === 'admin');
      expect(audit).toEqual([
        expect.objectContaining({
          who: 'invalid-credential',
          method: 'POST',
          path: '/admin/users',
          status: 401,
          address: '127.0.0.1',
          at: expect.stringMatching(/Z$/),
        }),
      ]);
      expect(JSON.stringify(audit)).not.toContain('a-wrong-admin-credential-0000');
      // Every call from this address counts, refused ones too: spend what is left, then the next is refused.
      const first = await http('GET', `${admin.url}/admin/apps`, { token: 'x'.repeat(30) });
      expect(first.status).toBe(401);
      const left = Number(first.headers.get('ratelimit-remaining'));
      for (let i = 0; i < left; i++) expect((await http('GET', `${admin.url}/admin/apps`, { token: 'x'.repeat(30) })).status).toBe(401);
      const limited = await http('GET', `${admin.url}/admin/apps`, { token: 'x'.repeat(30) });
      expect(limited).toMatchObject({ status: 429, body: { code: 'RATE_LIMITED' } });
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await refusalCounts(internalUrl)).toMatchObject({ admin: 1 }); // on its internal /metrics, by budget
    } finally {
      await admin.close();
      await close();
    }
  });
});

describe('the all-in-one launcher', () => {
  it('refuses to run with NODE_ENV=production and binds 127.0.0.1 unless PLATFORM_BIND says otherwise', () => {
    expect(() => loadPlatformConfig({ NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => loadPlatformConfig({ NODE_ENV: 'production' })).toThrow(/NODE_ENV/);
    expect(loadPlatformConfig({}).PLATFORM_BIND).toBe('127.0.0.1');
    expect(loadPlatformConfig({}).AUTH_ADMIN_TOKEN).toBeUndefined();
  });

  it('generates the admin credential once per data directory, readable by its owner only, and refuses a tampered file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'platform-admin-'));
    try {
      const token = ensureAdminToken(join(dir, 'data'));
      expect(token).toMatch(/^adm_[A-Za-z0-9_-]{40,}$/);
      expect(lstatSync(join(dir, 'data', 'admin-token')).mode & 0o777).toBe(0o600);
      expect(lstatSync(join(dir, 'data')).mode & 0o777).toBe(0o700);
      expect(ensureAdminToken(join(dir, 'data'))).toBe(token);
      expect(ensureAdminToken(join(dir, 'other'))).not.toBe(token);

      chmodSync(join(dir, 'data', 'admin-token'), 0o644);
      expect(() => ensureAdminToken(join(dir, 'data'))).toThrow(/readable by others/);
      writeFileSync(join(dir, 'planted'), 'adm_known-to-the-attacker\n', { mode: 0o600 });
      const linked = join(dir, 'linked');
      ensureAdminToken(linked);
      rmSync(join(linked, 'admin-token'));
      symlinkSync(join(dir, 'planted'), join(linked, 'admin-token'));
      expect(() => ensureAdminToken(linked)).toThrow(/not a regular file/);
      expect(readFileSync(join(dir, 'planted'), 'utf8')).toContain('attacker');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
