import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_USERS, DEMO_VENDOR_APP, type DemoCredentials, demoCredentialsPath, prepareDemo } from '@trading/platform';
import { patLogin } from '../support/pat-helpers';
import { inDays, startTestPlatform, type TestPlatform } from '../support/test-platform';

/** The secret every earlier version registered the demo vendor app with, published in its source. */
const PUBLISHED_SECRET = 'tcs_demo-vendor-secret-for-the-local-sandbox-only';

/** `npm start`'s demo credentials: per data directory, in a 0600 file, one live demo PAT at a time. */
describe('demo credentials', () => {
  let p: TestPlatform;
  const dataDir = mkdtempSync(join(tmpdir(), 'demo-credentials-'));

  beforeAll(async () => {
    p = await startTestPlatform({ PLATFORM_DATA_DIR: dataDir });
  }, 60_000);
  afterAll(async () => {
    await p?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as DemoCredentials;

  it('replaces the published vendor secret, keeps one live demo PAT across starts and revokes the ones before it', async () => {
    const alice = (await p.auth.users.findByEmail(DEMO_USERS[0]!.email))!;
    // A data directory from an earlier version: the demo app with the published secret, a demo PAT from each start.
    await p.auth.registry.ensureDemoApp(DEMO_VENDOR_APP.registration, {
      clientId: DEMO_VENDOR_APP.clientId,
      clientSecret: PUBLISHED_SECRET,
    });
    const old = await p.auth.pats.create({
      userId: alice.id,
      name: 'all-in-one demo 2024-01-01T00:00:00.000Z',
      access: 'READ_WRITE',
      expires: inDays(30),
    });

    const file = await prepareDemo(p, p.config);
    expect(file).toBe(demoCredentialsPath(p.config));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const first = read(file);
    expect(first.clientSecret).not.toBe(PUBLISHED_SECRET);
    expect(await p.auth.registry.authenticate(DEMO_VENDOR_APP.clientId, PUBLISHED_SECRET, 'DEV')).toBeNull();
    expect(await p.auth.registry.authenticate(DEMO_VENDOR_APP.clientId, first.clientSecret, 'DEV')).not.toBeNull();
    expect((await patLogin(p.urls.api, first.pat)).status).toBe(200);
    expect((await patLogin(p.urls.api, old.token)).status).toBe(401);

    // The next start: the same PAT and secret, nothing new minted.
    const before = (await p.auth.pats.listForUser(alice.id)).length;
    await prepareDemo(p, p.config);
    expect(read(file)).toEqual(first);
    expect((await p.auth.pats.listForUser(alice.id)).length).toBe(before);

    // Once the recorded PAT stops working, a start mints a new one (and the secret stays).
    await p.auth.pats.revoke(alice.id, first.pat.split('.')[0]);
    await prepareDemo(p, p.config);
    const next = read(file);
    expect(next.pat).not.toBe(first.pat);
    expect(next.clientSecret).toBe(first.clientSecret);
    expect((await patLogin(p.urls.api, next.pat)).status).toBe(200);
    const live = (await p.auth.pats.listForUser(alice.id)).filter((t) => !t.revokedAt && t.name.startsWith('all-in-one demo'));
    expect(live.map((t) => t.id)).toEqual([next.pat.split('.')[0]]);
  });
});
