import { http } from '@trading/testing';
import { DEMO_USERS } from '@trading/platform';
import { authorizationCode, exchange, provisionApp, refresh, type ProvisionedApp } from '../support/oauth-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const alice = { email: DEMO_USERS[0]!.email, password: DEMO_USERS[0]!.password };

/**
 * A spent authorization code presented again revokes its grant (RFC 9700 §4.5), but only when
 * its own client presents it: another vendor holding a leaked code cannot revoke the victim app's grant.
 */
describe('authorization code reuse', () => {
  let p: TestPlatform;
  let victim: ProvisionedApp;
  let other: ProvisionedApp;
  const accountsWith = (token: string) => http('GET', `${p.urls.api}/accounts`, { token }).then((r) => r.status);

  beforeAll(async () => {
    p = await startTestPlatform();
    victim = await provisionApp(p, { appName: 'Victim App' });
    other = await provisionApp(p, { appName: 'Other Vendor' });
  }, 60_000);
  afterAll(() => p?.stop());

  it('another client presenting a spent code gets invalid_grant and revokes nothing; the owner presenting it again revokes', async () => {
    const c = await authorizationCode(p, victim, alice);
    const first = await exchange(p, victim, c);
    expect(first.status).toBe(200);
    expect(await accountsWith(first.body.access_token)).toBe(200);

    // The other vendor's own valid credentials, the victim's spent code (and its verifier, leaked with it).
    const attack = await exchange(p, other, c);
    expect(attack.status).toBe(400);
    expect(attack.body.error).toBe('invalid_grant');

    // The victim's tokens still work, and refresh still works.
    expect(await accountsWith(first.body.access_token)).toBe(200);
    const refreshed = await refresh(p.urls.api, victim, first.body.refresh_token);
    expect(refreshed.status).toBe(200);
    expect(await accountsWith(refreshed.body.access_token)).toBe(200);

    // The owner presenting its spent code again: the grant is revoked (unchanged behaviour).
    const replay = await exchange(p, victim, c);
    expect(replay.status).toBe(400);
    expect(replay.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('already used') });
    expect(await accountsWith(refreshed.body.access_token)).toBe(401);
    expect((await refresh(p.urls.api, victim, refreshed.body.refresh_token)).body.error).toBe('invalid_grant');
  });
});
