import { http } from '@trading/testing';
import { DEMO_USERS } from '@trading/platform';
import { provisionApp, tokensFor } from '../support/oauth-helpers';
import { patSession } from '../support/sessions';
import { inDays, startTestPlatform, type TestPlatform } from '../support/test-platform';

const alice = { email: DEMO_USERS[0]!.email, password: DEMO_USERS[0]!.password };

/** A vendor app the user trusted with account scopes still cannot see or manage the user's PATs. */
describe('PAT management is the user’s own', () => {
  let p: TestPlatform;
  let vendorToken: string;

  beforeAll(async () => {
    p = await startTestPlatform();
    const app = await provisionApp(p, { scopes: ['read:accounts', 'write:accounts'] });
    vendorToken = (await tokensFor(p, app, alice, 'read:accounts write:accounts')).access_token;
  }, 60_000);
  afterAll(() => p?.stop());

  it('attack: a vendor token with read:accounts cannot read the PAT login history, with write:accounts cannot revoke a PAT', async () => {
    const user = (await p.auth.users.findByEmail(alice.email))!;
    const { pat } = await p.auth.pats.create({ userId: user.id, name: 'ci', access: 'READ_ONLY', expires: inDays(5) });
    const history = await http('GET', `${p.urls.api}/pat/login-activity`, { token: vendorToken });
    expect(history).toMatchObject({ status: 403, body: { code: 'PAT_SESSION_REQUIRED' } });
    const revoke = await http('POST', `${p.urls.api}/pat/revoke`, { token: vendorToken, body: { tokenId: pat.id } });
    expect(revoke).toMatchObject({ status: 403, body: { code: 'PAT_SESSION_REQUIRED' } });
    const [row] = await p.auth.dataSource.query('SELECT revoked_at FROM personal_access_tokens WHERE id = $1', [pat.id]);
    expect(row.revoked_at).toBeNull();
  });

  it('attack: claims of an OAuth session reaching auth directly (past the facade) are refused there too', async () => {
    const user = (await p.auth.users.findByEmail(alice.email))!;
    const claims = await p
      .signerFor('rest-facade')
      .sign({ sub: user.id, sid: 's', kind: 'oauth', clientId: 'vendor', scope: ['read:accounts', 'write:accounts'] }, 'auth');
    const res = await http('GET', `${p.urls.authInternal}/pat/login-activity`, { headers: { 'x-internal-claims': claims } });
    expect(res).toMatchObject({ status: 403, body: { code: 'PAT_SESSION_REQUIRED' } });
  });

  it('a PAT session still manages PATs', async () => {
    const session = await patSession(p, alice.email, 'READ_WRITE');
    expect((await http('GET', `${p.urls.api}/pat/login-activity`, { token: session })).status).toBe(200);
    const user = (await p.auth.users.findByEmail(alice.email))!;
    const { pat } = await p.auth.pats.create({ userId: user.id, name: 'old', access: 'READ_ONLY', expires: inDays(5) });
    expect((await http('POST', `${p.urls.api}/pat/revoke`, { token: session, body: { tokenId: pat.id } })).status).toBe(200);
  });
});
