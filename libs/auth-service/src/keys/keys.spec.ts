import { createLocalJWKSet, jwtVerify } from 'jose';
import { ACCESS_TOKEN_AUDIENCE } from '@trading/auth';
import { createLogger } from '@trading/logging';
import { MemoryStore } from '@trading/redis';
import { listen, type RunningServer } from '@trading/service';
import { http, startOnTestDatabase, testKeys, type ServiceOnTestDatabase } from '@trading/testing';
import { createAuthApp, loadAuthConfig, type AuthApp } from '../app';

/** Signing keys: rotated and retired with the admin API, seen by every instance without a restart, encrypted at rest. */
describe('access-token signing keys', () => {
  const keys = testKeys();
  const admin = 'adm-' + 'k'.repeat(30);
  const store = new MemoryStore();
  const config = (databaseUrl: string, extra: Record<string, string> = {}) =>
    loadAuthConfig({
      ...keys.env('auth'),
      AUTH_DATABASE_URL: databaseUrl,
      AUTH_ADMIN_TOKEN: admin,
      AUTH_KEY_ENCRYPTION_KEY: 'e'.repeat(40),
      AUTH_SIGNING_KEY_RELOAD_MS: '200',
      MAIL_POLL_MS: '0',
      ...extra,
    });
  let first: ServiceOnTestDatabase<AuthApp>;
  let second: AuthApp;
  let adminApi: RunningServer;

  beforeAll(async () => {
    first = await startOnTestDatabase('auth', (url) => createAuthApp(config(url), { logger: createLogger('auth', 'silent'), store }));
    second = await createAuthApp(config(first.databaseUrl), { logger: createLogger('auth', 'silent'), store });
    adminApi = await listen(first.service.admin!, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await adminApi?.close();
    await second?.close();
    await first?.stop();
  });

  const kids = (app: AuthApp) => app.signer.jwks().keys.map((k) => k['kid']);
  const verifies = async (token: string, app: AuthApp) =>
    jwtVerify(token, createLocalJWKSet(app.signer.jwks() as never), { audience: ACCESS_TOKEN_AUDIENCE }).then(
      () => true,
      () => false,
    );
  const eventually = async (check: () => boolean) => {
    for (let i = 0; i < 50 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
    return check();
  };
  const call = (method: 'GET' | 'POST', path: string) => http(method, `${adminApi.url}${path}`, { token: admin });

  it('stores private keys encrypted, never as PEM', async () => {
    const rows: Array<{ private_key_pem: string }> = await first.service.dataSource.query('SELECT private_key_pem FROM signing_keys');
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.private_key_pem).toMatch(/^enc:v1:/);
      expect(row.private_key_pem).not.toMatch(/PRIVATE KEY|"d"/);
    }
  });

  it('rotates: the new key signs at once here and within a reload everywhere; the old key’s tokens still verify until it is retired', async () => {
    const before = await first.service.signer.sign(
      { sub: 'u', sid: 's', kind: 'pat', patId: 'p', scope: ['read:accounts'], access: 'READ_ONLY' },
      60,
    );
    const [oldKid] = kids(first.service);
    const rotated = await call('POST', '/admin/keys/rotate');
    expect(rotated).toMatchObject({ status: 201, body: { status: 'ACTIVE' } });
    const newKid = rotated.body.kid as string;
    expect(kids(first.service)).toEqual(expect.arrayContaining([oldKid, newKid]));
    expect(await eventually(() => kids(second).includes(newKid))).toBe(true);
    const after = await second.signer.sign(
      { sub: 'u', sid: 's', kind: 'pat', patId: 'p', scope: ['read:accounts'], access: 'READ_ONLY' },
      60,
    );
    expect(JSON.parse(Buffer.from(after.split('.')[0]!, 'base64url').toString()).kid).toBe(newKid);
    expect(await verifies(before, second)).toBe(true);

    expect((await call('POST', `/admin/keys/${newKid}/retire`)).status).toBe(409); // the active key
    expect((await call('POST', `/admin/keys/${oldKid}/retire`)).body).toMatchObject({ kid: oldKid, status: 'RETIRED' });
    expect(await eventually(() => !kids(second).includes(oldKid!))).toBe(true);
    expect(await verifies(before, second)).toBe(false);
    expect(await verifies(after, first.service)).toBe(true);
    expect((await call('GET', '/admin/keys')).body.keys.map((k: { kid: string; status: string }) => `${k.kid}:${k.status}`)).toEqual(
      expect.arrayContaining([`${newKid}:ACTIVE`, `${oldKid}:RETIRED`]),
    );
    expect((await call('POST', '/admin/keys/no-such-kid/retire')).status).toBe(404);
  });

  it('refuses to start with another encryption key, naming the problem, and leaves no database connection behind', async () => {
    // The half-built app connects under a name of its own, so the other instances' pools (which
    // may open or close a connection meanwhile) cannot blur the count.
    const halfBuilt = `half-built-${process.pid}`;
    const url = new URL(first.databaseUrl);
    url.searchParams.set('application_name', halfBuilt);
    const connections = async () =>
      Number(
        (
          await first.service.dataSource.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [halfBuilt])
        )[0].n,
      );
    await expect(
      createAuthApp(config(url.toString(), { AUTH_KEY_ENCRYPTION_KEY: 'x'.repeat(40) }), {
        logger: createLogger('auth', 'silent'),
        store,
      }),
    ).rejects.toThrow(/cannot be decrypted with AUTH_KEY_ENCRYPTION_KEY/);
    // The half-built app closed the pool it had opened before the keys failed to load.
    expect(await connections()).toBe(0);
  });
});
