import { http } from '@trading/testing';
import { DEMO_USERS } from '@trading/platform';
import { authorizationCode, exchange, provisionApp, refresh, UserAgent } from '../support/oauth-helpers';
import { DashboardClient, newUser, patLogin } from '../support/pat-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const alice = { email: DEMO_USERS[0]!.email, password: DEMO_USERS[0]!.password };

/** A cookie copied from the log once minted a PAT. Everything secret that crosses the platform in a sign-in, a consent and a PAT login stays out of its logs. */
describe('logs hold no secret', () => {
  let p: TestPlatform;
  const lines: string[] = [];

  beforeAll(async () => {
    p = await startTestPlatform({ LOG_LEVEL: 'debug' }, { logDestination: { write: (line: string) => void lines.push(line) } });
  }, 60_000);
  afterAll(() => p?.stop());

  it('after a dashboard sign-in, a consent, a code exchange, a refresh and a PAT login, no cookie, code, secret, token or password is in any log line', async () => {
    const secrets: string[] = [];

    // Dashboard: sign in (session cookie), create a PAT through the page.
    const user = await newUser(p);
    secrets.push(user.password);
    const dashboard = new DashboardClient(p.urls.login);
    const signIn = await dashboard.signIn(user.email, user.password);
    for (const cookie of signIn.setCookies) secrets.push(cookie.split(';')[0]!.split('=')[1]!);
    const { token: pat } = await p.auth.pats.create({
      userId: user.id,
      name: 'log check',
      access: 'READ_ONLY',
      expires: new Date(Date.now() + 86400_000).toISOString().slice(0, 10),
    });
    secrets.push(pat, pat.split('.')[1]!);
    const session = await patLogin(p.urls.api, pat);
    expect(session.status).toBe(200);
    secrets.push(session.body.token);
    expect((await http('GET', `${p.urls.api}/accounts`, { token: session.body.token })).status).toBe(200);

    // OAuth: consent (its own cookie), code, exchange, refresh.
    const app = await provisionApp(p, { scopes: ['read:accounts'] });
    secrets.push(app.clientSecret);
    const ua = new UserAgent(p.urls.login);
    const c = await authorizationCode(p, app, alice, 'read:accounts', ua);
    secrets.push(c.code, c.verifier);
    const tokens = await exchange(p, app, c);
    expect(tokens.status).toBe(200);
    secrets.push(tokens.body.access_token, tokens.body.refresh_token);
    const refreshed = await refresh(p.urls.api, app, tokens.body.refresh_token);
    expect(refreshed.status).toBe(200);
    secrets.push(refreshed.body.access_token, refreshed.body.refresh_token);
    await p.auth.mail.runOnce(); // the client secret's mail goes out (to the local mail log in DEV)

    await new Promise((r) => setTimeout(r, 200));
    const log = lines.join('');
    expect(log).toContain('request completed'); // the access log was on and captured
    for (const secret of secrets.filter((s) => s && s.length >= 8)) expect(log).not.toContain(secret);
    expect(log).not.toMatch(/set-cookie/i);
    expect(log).not.toMatch(/"location"/i);
  });
});
