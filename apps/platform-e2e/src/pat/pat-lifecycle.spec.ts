import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { withDatabaseName } from '@trading/db';
import { http, TEST_POSTGRES_URL } from '@trading/testing';
import { extraAuth, refusalCounts } from '../support/oauth-helpers';
import { AUTH_LIMITS, DashboardClient, extraFacade, newUser, patLogin, sessionToken, utcDate } from '../support/pat-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

/** Session reads an instance answered from memory so far, from its /metrics. */
const cacheHits = async (metricsUrl: string) =>
  Number(/^session_cache_reads\{[^}]*result="hit"[^}]*\} (\d+)/m.exec(await (await fetch(metricsUrl)).text())?.[1] ?? NaN);

/**
 * Personal access tokens from outside, over HTTP: the dashboard's rules for creating tokens, the method and
 * IP rules on every call, revocation across facade instances, throttled guessing and the
 * login activity API.
 */
describe('PAT lifecycle', () => {
  let p: TestPlatform;
  /** A second facade instance on the same Redis, trusting the loopback "load balancer". */
  let trusting: Awaited<ReturnType<typeof extraFacade>>;

  beforeAll(async () => {
    p = await startTestPlatform();
    trusting = await extraFacade(p, ['loopback']);
  }, 60_000);
  afterAll(async () => {
    await trusting?.close();
    await p?.stop();
  });

  async function signedIn() {
    const user = await newUser(p);
    const dashboard = new DashboardClient(p.urls.login);
    expect((await dashboard.signIn(user.email, user.password)).status).toBe(303);
    return { user, dashboard };
  }

  async function tokenFor(dashboard: DashboardClient, fields: Parameters<DashboardClient['createToken']>[0] = {}) {
    const created = await dashboard.createToken(fields);
    expect(created.status).toBe(303); // post/redirect/get
    return created.token!;
  }

  /** A fresh documentation-range address per test, so limits counted per IP never collide. */
  const someIp = () => `198.51.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 1}`;

  describe('creating tokens in the dashboard', () => {
    it('accepts an expiry from today to one year from today and refuses one year and a day or the past, naming the field', async () => {
      const { dashboard } = await signedIn();
      for (const expires of [utcDate(0), utcDate(0, 1)]) {
        const ok = await dashboard.createToken({ name: `exp ${expires}`, expires });
        expect({ expires, status: ok.status }).toEqual({ expires, status: 303 });
        expect(ok.token).toMatch(/^tpat_[0-9A-Za-z]{16}\.[0-9A-Za-z]{38}$/);
      }
      // A token valid through today works today.
      expect((await patLogin(p.urls.api, (await dashboard.createToken({ expires: utcDate(0) })).token!)).status).toBe(200);

      for (const expires of [utcDate(1, 1), utcDate(-1), '2026-02-30', 'soon']) {
        const refused = await dashboard.createToken({ name: 'too far', expires });
        expect({ expires, status: refused.status }).toEqual({ expires, status: 400 });
        expect(refused.token).toBeUndefined();
        // A sentence about the date, not the field's name.
        expect(refused.errors['expires']).toMatch(/date|one year/);
        // What was typed comes back, so the user only fixes the field at fault.
        expect(refused.body).toContain('value="too far"');
      }
    });

    it('validates name, scope and IPs on the server, each message beside its field', async () => {
      const { dashboard } = await signedIn();
      expect((await dashboard.createToken({ name: '   ' })).errors['name']).toBe('Give the token a name.');
      expect((await dashboard.createToken({ name: 'x'.repeat(101) })).errors['name']).toMatch(/at most 100 characters/);
      expect((await dashboard.createToken({ scope: 'ADMIN' })).errors['scope']).toBe('Choose read only, or read and write.');
      const badIp = await dashboard.createToken({ ips: '10.0.0.1, example.com' });
      expect(badIp.status).toBe(400);
      expect(badIp.errors['ips']).toContain('example.com');
      const ok = await dashboard.createToken({ name: 'both families', ips: '203.0.113.7\n2001:db8::/32, 10.0.0.0/8' });
      expect(ok.status).toBe(303);
      expect(ok.body).toContain('203.0.113.7, 2001:db8::/32, 10.0.0.0/8');
    });

    it('shows the token once and never again, listing it by id with its scope and status', async () => {
      const { dashboard } = await signedIn();
      const token = await tokenFor(dashboard, { name: 'listed', scope: 'READ_WRITE' });
      const tokenId = token.split('.')[0]!;
      const page = await dashboard.request('GET', '/en/developer');
      expect(page.body).not.toContain(token.split('.')[1]);
      expect(page.body).toMatch(new RegExp(`data-token-id="${tokenId}"[\\s\\S]*?listed[\\s\\S]*?READ_WRITE[\\s\\S]*?ACTIVE`));
    });
  });

  describe('pages and forms', () => {
    it('refuses a form without the CSRF token or with another session’s', async () => {
      const { dashboard } = await signedIn();
      const other = await signedIn();
      const missing = await dashboard.request('POST', '/en/developer/tokens', { name: 'x', expires: utcDate(1), scope: 'READ_ONLY' });
      expect(missing.status).toBe(403);
      const foreign = await dashboard.request('POST', '/en/developer/tokens', {
        _csrf: other.dashboard.csrf,
        name: 'x',
        expires: utcDate(1),
        scope: 'READ_ONLY',
      });
      expect(foreign.status).toBe(403);
      expect(foreign.body).toContain('did not come from this site');
      // Signing in needs the token too (login CSRF).
      const user = await newUser(p);
      const fresh = new DashboardClient(p.urls.login);
      expect((await fresh.request('POST', '/en/signin', { email: user.email, password: user.password })).status).toBe(403);
    });

    it('sends CSP, anti-framing headers and HttpOnly SameSite cookies, Secure off localhost', async () => {
      const local = new DashboardClient(p.urls.login);
      const page = await local.request('GET', '/en/signin');
      expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(page.headers.get('content-security-policy')).not.toContain('unsafe-inline');
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(page.body).not.toMatch(/<script>|<style>|\sstyle="|\son[a-z]+="/);
      expect(page.setCookies[0]).toMatch(/HttpOnly; SameSite=Lax/);
      expect(page.setCookies[0]).not.toMatch(/Secure/);

      const user = await newUser(p);
      // A forwarded host counts only from a load balancer auth was told to trust.
      const untrusted = await new DashboardClient(p.urls.login, { 'x-forwarded-host': 'developer.broker.example' }).signIn(
        user.email,
        user.password,
      );
      expect(untrusted.setCookies.find((c) => c.startsWith('tapi_session='))).not.toMatch(/Secure/);
      const behindProxy = await extraAuth(p, { AUTH_TRUST_PROXY: ['loopback'] });
      try {
        const signIn = await new DashboardClient(behindProxy.url, { 'x-forwarded-host': 'developer.broker.example' }).signIn(
          user.email,
          user.password,
        );
        expect(signIn.setCookies.find((c) => c.startsWith('tapi_session='))).toMatch(/HttpOnly; SameSite=Lax; Max-Age=\d+; Secure/);
      } finally {
        await behindProxy.close();
      }

      const script = await http('GET', `${p.urls.login}/assets/web.js`);
      expect(script.headers.get('content-type')).toContain('text/javascript');
    });

    it('sends signed-out visitors to sign in, and back afterwards; a wrong password says nothing about the account', async () => {
      const anonymous = await new DashboardClient(p.urls.login).request('GET', '/en/developer');
      expect(anonymous).toMatchObject({ status: 303 });
      expect(anonymous.headers.get('location')).toBe('/en/signin?next=%2Fen%2Fdeveloper');
      const user = await newUser(p);
      const dashboard = new DashboardClient(p.urls.login);
      const wrong = await dashboard.signIn(user.email, 'not-the-password');
      const unknown = await dashboard.signIn(`nobody-${randomUUID()}@example.com`, 'not-the-password');
      expect([wrong.status, unknown.status]).toEqual([401, 401]);
      expect(wrong.body).toContain('The e-mail or password is wrong.');
      expect(unknown.body).toContain('The e-mail or password is wrong.');
      // `next` may only be a path on this site.
      await dashboard.request('GET', '/en/signin');
      const offsite = await dashboard.request('POST', '/en/signin', {
        _csrf: dashboard.csrf,
        email: user.email,
        password: user.password,
        next: '//evil.example/x',
      });
      expect(offsite.headers.get('location')).toBe('/en/developer');
    });

    it('signs out: the old session cookie opens nothing afterwards', async () => {
      const user = await newUser(p);
      const dashboard = new DashboardClient(p.urls.login);
      const signIn = await dashboard.signIn(user.email, user.password);
      const sessionCookie = signIn.setCookies.find((c) => c.startsWith('tapi_session='))!.split(';')[0]!;
      const out = await dashboard.request('POST', '/en/signout', { _csrf: dashboard.csrf });
      expect(out.status).toBe(303);
      expect(out.setCookies.some((c) => /^tapi_session=;.*Max-Age=0/.test(c))).toBe(true);
      // Replaying the old cookie: the session is gone from the server, not just from the browser.
      const replay = await fetch(`${p.urls.login}/en/developer`, { redirect: 'manual', headers: { cookie: sessionCookie } });
      expect(replay.status).toBe(303);
    });

    it("throttles failed sign-ins per account at the guesser's address; the account's owner elsewhere is not locked out", async () => {
      const user = await newUser(p);
      const behindProxy = await extraAuth(p, { AUTH_TRUST_PROXY: ['loopback'] });
      try {
        const guesser = new DashboardClient(behindProxy.url, { 'x-forwarded-for': '198.51.100.77' });
        for (let i = 0; i < AUTH_LIMITS.SIGNIN_MAX_FAILURES_PER_ACCOUNT; i++)
          expect((await guesser.signIn(user.email, `wrong-${i}`)).status).toBe(401);
        const blocked = await guesser.signIn(user.email, user.password);
        expect(blocked.status).toBe(429);
        expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(blocked.body).toContain('Too many failed sign-ins');
        // abuse: the owner, from their own address, signs in as usual.
        expect(
          (await new DashboardClient(behindProxy.url, { 'x-forwarded-for': '203.0.113.5' }).signIn(user.email, user.password)).status,
        ).toBe(303);
      } finally {
        await behindProxy.close();
      }
      const someoneElse = await newUser(p);
      expect((await new DashboardClient(p.urls.login).signIn(someoneElse.email, someoneElse.password)).status).toBe(303);
    });
  });

  describe('using tokens', () => {
    it('lets READ_ONLY sessions GET but not POST (403 READ_ONLY_TOKEN), and READ_WRITE sessions both', async () => {
      const { dashboard } = await signedIn();
      const ro = await sessionToken(p.urls.api, await tokenFor(dashboard, { scope: 'READ_ONLY' }));
      const rw = await tokenFor(dashboard, { scope: 'READ_WRITE' });
      expect((await http('GET', `${p.urls.api}/accounts`, { token: ro })).status).toBe(200);
      const post = await http('POST', `${p.urls.api}/pat/revoke`, { token: ro, body: { tokenId: rw.split('.')[0] } });
      expect(post).toMatchObject({ status: 403, body: { code: 'READ_ONLY_TOKEN' } });
      expect((await http('GET', `${p.urls.api}/pat/login-activity`, { token: ro })).status).toBe(200);
      const rwSession = await sessionToken(p.urls.api, rw);
      expect((await http('GET', `${p.urls.api}/accounts`, { token: rwSession })).status).toBe(200);
      expect((await http('POST', `${p.urls.api}/pat/revoke`, { token: rwSession, body: { tokenId: rw.split('.')[0] } })).status).toBe(200);
    });

    it('lets READ_ONLY sessions run GraphQL queries but not mutations at the gateway', async () => {
      const { dashboard } = await signedIn();
      const ro = await sessionToken(p.urls.api, await tokenFor(dashboard, { scope: 'READ_ONLY' }));
      const rw = await sessionToken(p.urls.api, await tokenFor(dashboard, { scope: 'READ_WRITE' }));
      const query = await http('POST', p.urls.gateway, { token: ro, body: { query: '{ accounts { id } }' } });
      expect(query.status).toBe(200);
      expect(query.body.errors).toBeUndefined();

      // A what-if needs only read:orders, which a READ_ONLY session holds: the subgraph's method rule
      // alone refuses it. Cancelling needs write:orders, but the method rule is named first, as the real reason.
      const whatIf = `mutation { whatIfOrder(input: { accountId: "${randomUUID()}", symbol: "AAPL", side: "BUY", type: "MARKET", timeInForce: "DAY", quantity: "1" }) { wouldBeRejected } }`;
      const cancel = `mutation { cancelOrder(orderId: "${randomUUID()}") { id } }`;
      for (const mutation of [whatIf, cancel]) {
        const refused = await http('POST', p.urls.gateway, { token: ro, body: { query: mutation } });
        expect(refused.body.data ?? null).toBeNull();
        expect(refused.body.errors?.map((e: { extensions?: { code?: string } }) => e.extensions?.code)).toEqual(['READ_ONLY_TOKEN']);
        // The same call with a READ_WRITE session passes both rules and reaches the OMS, which finds no such account or order.
        const allowed = await http('POST', p.urls.gateway, { token: rw, body: { query: mutation } });
        expect(allowed.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      }
    });

    it('holds IP restrictions at login and on every call, believing X-Forwarded-For only from a trusted proxy', async () => {
      const { dashboard } = await signedIn();
      const allowed = '203.0.113.7';
      const token = await tokenFor(dashboard, { ips: `${allowed}, 2001:db8::/32` });
      const from = (ip: string) => ({ 'x-forwarded-for': ip });

      // The platform's facade trusts no proxy: a forged header changes nothing, the caller is 127.0.0.1.
      expect((await patLogin(p.urls.api, token, from(allowed))).status).toBe(401);
      // Behind a trusted proxy the forwarded address counts, IPv4 and IPv6 alike.
      expect((await patLogin(trusting.api, token, from('198.51.100.9'))).status).toBe(401);
      expect((await patLogin(trusting.api, token, from('2001:db8::42'))).status).toBe(200);
      const session = await sessionToken(trusting.api, token, from(allowed));
      expect((await http('GET', `${trusting.api}/accounts`, { token: session, headers: from(allowed) })).status).toBe(200);

      // Every call is checked, not just the login.
      const elsewhere = await http('GET', `${trusting.api}/accounts`, { token: session, headers: from('198.51.100.9') });
      expect(elsewhere).toMatchObject({ status: 403, body: { code: 'IP_NOT_ALLOWED' } });
      expect(elsewhere.headers.get('www-authenticate')).toMatch(
        /^Bearer realm="trading-api", error="invalid_token", error_description="This token may not be used from this address"/,
      );
      // userinfo names the address refusal as such, not as a missing scope.
      const userinfo = await http('GET', `${trusting.api}/oauth/userinfo`, { token: session, headers: from('198.51.100.9') });
      expect(userinfo).toMatchObject({
        status: 403,
        body: { error: 'invalid_token', error_description: 'This token may not be used from this address' },
      });
      expect(userinfo.headers.get('www-authenticate')).toContain('error_description="This token may not be used from this address"');
      expect((await http('GET', `${p.urls.api}/accounts`, { token: session, headers: from(allowed) })).status).toBe(403);

      // A list naming the loopback range admits direct local callers.
      const local = await tokenFor(dashboard, { ips: '127.0.0.0/8, ::1' });
      expect((await http('GET', `${p.urls.api}/accounts`, { token: await sessionToken(p.urls.api, local) })).status).toBe(200);
    });

    it('revokes through POST /pat/revoke at once in every facade instance sharing Redis, harmlessly twice', async () => {
      const { dashboard } = await signedIn();
      const token = await tokenFor(dashboard, { scope: 'READ_WRITE' });
      const tokenId = token.split('.')[0]!;
      const sessions = [await sessionToken(p.urls.api, token), await sessionToken(trusting.api, token)];
      const hitsBefore = await Promise.all([cacheHits(`${p.internalUrls['rest-facade']}/metrics`), cacheHits(trusting.metrics)]);
      for (let round = 0; round < 3; round++)
        for (const api of [p.urls.api, trusting.api])
          for (const s of sessions) expect((await http('GET', `${api}/accounts`, { token: s })).status).toBe(200);
      // Caching is on in both instances: the repeated session reads were answered from memory.
      const hitsAfter = await Promise.all([cacheHits(`${p.internalUrls['rest-facade']}/metrics`), cacheHits(trusting.metrics)]);
      expect(hitsAfter.map((n, i) => n - hitsBefore[i]! >= 4)).toEqual([true, true]);

      const first = await http('POST', `${trusting.api}/pat/revoke`, { token: sessions[0], body: { tokenId } });
      expect(first).toMatchObject({ status: 200, body: { tokenId, revokedAt: expect.stringMatching(/Z$/) } });
      // The very next request, through the other instance (whose memory held both sessions), is refused.
      for (const api of [p.urls.api, trusting.api]) {
        for (const s of sessions) {
          const res = await http('GET', `${api}/accounts`, { token: s });
          expect(res.status).toBe(401);
          expect(res.body.detail).toMatch(/session has ended/);
        }
      }
      expect((await patLogin(p.urls.api, token)).status).toBe(401);

      const other = await tokenFor(dashboard, { scope: 'READ_WRITE' });
      const live = await sessionToken(p.urls.api, other);
      const again = await http('POST', `${p.urls.api}/pat/revoke`, { token: live, body: { tokenId } });
      expect(again).toMatchObject({ status: 200, body: { tokenId, revokedAt: first.body.revokedAt } });
    });

    it("answers 404 for someone else's token, 400 naming tokenId for a bad body, 401 without a session", async () => {
      const alice = await signedIn();
      const bob = await signedIn();
      const bobsToken = await tokenFor(bob.dashboard);
      const session = await sessionToken(p.urls.api, await tokenFor(alice.dashboard, { scope: 'READ_WRITE' }));
      const foreign = await http('POST', `${p.urls.api}/pat/revoke`, { token: session, body: { tokenId: bobsToken.split('.')[0] } });
      expect(foreign).toMatchObject({ status: 404, body: { code: 'NOT_FOUND', field: 'tokenId' } });
      expect((await patLogin(p.urls.api, bobsToken)).status).toBe(200);
      for (const body of [{}, { tokenId: 42 }, { tokenId: bobsToken }, { token: 'tpat_x' }]) {
        expect(await http('POST', `${p.urls.api}/pat/revoke`, { token: session, body })).toMatchObject({
          status: 400,
          body: { code: 'BAD_USER_INPUT', field: 'tokenId' },
        });
      }
      expect((await http('POST', `${p.urls.api}/pat/revoke`, { body: { tokenId: bobsToken.split('.')[0] } })).status).toBe(401);
      // The dashboard's revoke is no way around it either.
      expect((await alice.dashboard.revoke(bobsToken.split('.')[0]!)).status).toBe(404);
      // Nor is a forged claims header sent straight to auth: the public listener has no such route, the internal one refuses it.
      expect(
        (
          await http('POST', `${p.urls.login}/pat/revoke`, {
            body: { tokenId: 'tpat_AAAAAAAAAAAAAAAA' },
            headers: { 'x-internal-claims': 'forged' },
          })
        ).status,
      ).toBe(404);
      expect(
        (
          await http('POST', `${p.urls.authInternal}/pat/revoke`, {
            body: { tokenId: 'tpat_AAAAAAAAAAAAAAAA' },
            headers: { 'x-internal-claims': 'forged' },
          })
        ).status,
      ).toBe(401);
    });

    it('ends sessions when the token expires, with no job running', async () => {
      const { dashboard } = await signedIn();
      const token = await tokenFor(dashboard);
      // Move the expiry to a few seconds from now, as if the token had been created long ago (wide
      // enough for the login and the first read under a loaded CI machine).
      const db = new Client({ connectionString: withDatabaseName(TEST_POSTGRES_URL, `${p.config.PLATFORM_DB_PREFIX}auth`) });
      await db.connect();
      await db.query(`UPDATE personal_access_tokens SET expires_at = now() + interval '6 seconds' WHERE id = $1`, [token.split('.')[0]]);
      const expiresAt = Date.now() + 6000;
      await db.end();
      const session = await sessionToken(p.urls.api, token);
      expect((await http('GET', `${p.urls.api}/accounts`, { token: session })).status).toBe(200);
      await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 500));
      expect((await http('GET', `${p.urls.api}/accounts`, { token: session })).status).toBe(401);
      expect((await patLogin(p.urls.api, token)).status).toBe(401);
    });
  });

  describe('guessing', () => {
    it('throttles failed logins per client IP with 429, Retry-After and RateLimit-* headers', async () => {
      const ip = someIp();
      const guess = () =>
        patLogin(trusting.api, `tpat_${randomUUID().replace(/-/g, '').slice(0, 16)}.${'A'.repeat(38)}`, { 'x-forwarded-for': ip });
      for (let i = 0; i < AUTH_LIMITS.PAT_LOGIN_MAX_FAILURES_PER_IP; i++) expect((await guess()).status).toBe(401);
      const throttled = await guess();
      expect(throttled.status).toBe(429);
      expect(throttled.headers.get('content-type')).toContain('application/problem+json');
      expect(throttled.body).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryAfterSeconds: expect.any(Number) });
      expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(throttled.headers.get('ratelimit-limit')).toBe(String(AUTH_LIMITS.PAT_LOGIN_MAX_FAILURES_PER_IP));
      expect(throttled.headers.get('ratelimit-remaining')).toBe('0');
      expect(throttled.headers.get('ratelimit-reset')).toMatch(/^\d+$/);
      // Another address is not affected.
      expect((await patLogin(trusting.api, 'garbage', { 'x-forwarded-for': someIp() })).status).toBe(401);
      // abuse: one guesser behind a NAT must not lock out the valid scripts behind it.
      const { dashboard } = await signedIn();
      expect((await patLogin(trusting.api, await tokenFor(dashboard), { 'x-forwarded-for': ip })).status).toBe(200);
    });

    it('answers a body that is not JSON with 400 naming the body, and does not count it as a failed login', async () => {
      const ip = someIp();
      const first = await http('POST', `${trusting.api}/pat/login`, {
        body: 'token=tpat_x',
        headers: { 'content-type': 'text/plain', 'x-forwarded-for': ip },
      });
      expect(first).toMatchObject({ status: 400, body: { code: 'BAD_USER_INPUT', field: 'body' } });
      for (let i = 0; i < AUTH_LIMITS.PAT_LOGIN_MAX_FAILURES_PER_IP + 2; i++) {
        expect(
          (
            await http('POST', `${trusting.api}/pat/login`, {
              body: 'not json',
              headers: { 'content-type': 'text/plain', 'x-forwarded-for': ip },
            })
          ).status,
        ).toBe(400);
      }
      // Still a full budget of real attempts from that address.
      expect(
        (await patLogin(trusting.api, 'tpat_AAAAAAAAAAAAAAAA.garbage', { 'x-forwarded-for': ip })).headers.get('ratelimit-remaining'),
      ).toBe(String(AUTH_LIMITS.PAT_LOGIN_MAX_FAILURES_PER_IP - 1));
    });

    it("throttles a token id's own failures from any address, never its right secret; throttled attempts write nothing", async () => {
      const { dashboard } = await signedIn();
      const token = await tokenFor(dashboard);
      const typo = token.slice(0, -1) + (token.endsWith('a') ? 'b' : 'a');
      for (let i = 0; i < AUTH_LIMITS.PAT_LOGIN_MAX_FAILURES_PER_TOKEN; i++) {
        // The whole answer on a failure (it failed once on a Redis Cluster, with only the status to go by).
        const guess = await patLogin(trusting.api, typo, { 'x-forwarded-for': someIp() });
        expect({ attempt: i + 1, status: guess.status, body: guess.status === 401 ? undefined : guess.body }).toEqual({
          attempt: i + 1,
          status: 401,
          body: undefined,
        });
      }
      const countAttempts = async () =>
        (await p.auth.dataSource.query('SELECT count(*)::int AS n FROM pat_login_attempts WHERE token_id = $1', [token.split('.')[0]]))[0]
          .n as number;
      const recorded = await countAttempts();
      const blocked = await patLogin(trusting.api, typo, { 'x-forwarded-for': someIp() });
      expect(blocked.status).toBe(429);
      expect(blocked.body.code).toBe('RATE_LIMITED');
      for (let i = 0; i < 5; i++) await patLogin(trusting.api, typo, { 'x-forwarded-for': someIp() });
      expect(await countAttempts()).toBe(recorded);
      expect((await patLogin(trusting.api, token, { 'x-forwarded-for': someIp() })).status).toBe(200);
    });

    it("counts each of auth's 429s on its internal /metrics, by the budget that refused it (rate_limit_refusals_total{limit})", async () => {
      const refusals = () => refusalCounts(p.internalUrls.auth);
      const before = await refusals();

      // PAT guessing from one address, through the facade (which signs the client address for auth).
      const patIp = someIp();
      const guess = () =>
        patLogin(trusting.api, `tpat_${randomUUID().replace(/-/g, '').slice(0, 16)}.${'A'.repeat(38)}`, { 'x-forwarded-for': patIp });
      for (let i = 0; i < AUTH_LIMITS.PAT_LOGIN_MAX_FAILURES_PER_IP; i++) expect((await guess()).status).toBe(401);
      expect((await guess()).status).toBe(429);

      // Failed OAuth client authentications for one client_id from one address.
      const oauthIp = someIp();
      const clientGuess = () =>
        http('POST', `${trusting.api}/oauth/token`, {
          body: {
            grant_type: 'REFRESH_TOKEN',
            refresh_token: 'trt_' + 'x'.repeat(43),
            client_id: 'tci_dev_guessed',
            client_secret: 'wrong',
          },
          headers: { 'x-forwarded-for': oauthIp },
        });
      for (let i = 0; i < AUTH_LIMITS.OAUTH_CLIENT_MAX_FAILURES; i++) expect((await clientGuess()).body.error).toBe('invalid_client');
      expect(await clientGuess()).toMatchObject({ status: 429, body: { error: 'temporarily_unavailable' } });

      // Failed dashboard sign-ins to one account.
      const user = await newUser(p);
      const guesser = new DashboardClient(p.urls.login);
      for (let i = 0; i < AUTH_LIMITS.SIGNIN_MAX_FAILURES_PER_ACCOUNT; i++)
        expect((await guesser.signIn(user.email, `wrong-${i}`)).status).toBe(401);
      expect((await guesser.signIn(user.email, user.password)).status).toBe(429);

      const after = await refusals();
      const budgets = ['pat_login', 'oauth_client_auth_failures', 'sign_in'];
      expect(budgets.map((limit) => [limit, (after[limit] ?? 0) - (before[limit] ?? 0)])).toEqual(budgets.map((limit) => [limit, 1]));
    });
  });

  describe('login activity', () => {
    it('lists the caller’s logins newest first, with failures, paginated and filtered by date', async () => {
      const { dashboard } = await signedIn();
      const token = await tokenFor(dashboard, { name: 'activity' });
      const tokenId = token.split('.')[0]!;
      const typo = token.slice(0, -1) + (token.endsWith('a') ? 'b' : 'a');
      await patLogin(p.urls.api, token, { 'user-agent': 'script/1' });
      await patLogin(p.urls.api, typo, { 'user-agent': 'script/2' });
      await patLogin(p.urls.api, token, { 'user-agent': 'script/3' });
      await patLogin(p.urls.api, typo, { 'user-agent': 'script/4' });
      const session = await sessionToken(p.urls.api, token, { 'user-agent': 'script/5' });
      const list = (query = '') => http('GET', `${p.urls.api}/pat/login-activity${query}`, { token: session });

      const all = await list();
      expect(all.status).toBe(200);
      expect(all.body.logins.map((l: { userAgent: string }) => l.userAgent)).toEqual([
        'script/5',
        'script/4',
        'script/3',
        'script/2',
        'script/1',
      ]);
      expect(all.body.logins.map((l: { outcome: string }) => l.outcome)).toEqual(['SUCCESS', 'FAILURE', 'SUCCESS', 'FAILURE', 'SUCCESS']);
      expect(all.body.logins[1]).toEqual({
        at: expect.stringMatching(/Z$/),
        tokenId,
        tokenName: 'activity',
        ip: '127.0.0.1',
        userAgent: 'script/4',
        outcome: 'FAILURE',
      });
      expect(all.body.nextCursor).toBeNull();

      const seen: string[] = [];
      let cursor: string | null = '';
      for (let pages = 0; cursor !== null; pages++) {
        expect(pages).toBeLessThan(3);
        const page = await list(`?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(page.status).toBe(200);
        expect(page.body.logins.length).toBeLessThanOrEqual(2);
        seen.push(...page.body.logins.map((l: { userAgent: string }) => l.userAgent));
        cursor = page.body.nextCursor;
      }
      expect(seen).toEqual(['script/5', 'script/4', 'script/3', 'script/2', 'script/1']);

      expect((await list(`?from=${utcDate(0)}&to=${utcDate(0)}`)).body.logins).toHaveLength(5);
      expect((await list(`?from=${utcDate(1)}`)).body.logins).toHaveLength(0);
      expect((await list(`?to=${utcDate(-1)}`)).body.logins).toHaveLength(0);
      expect((await list(`?from=${encodeURIComponent(all.body.logins[2].at)}`)).body.logins).toHaveLength(3);

      // Someone else sees none of it.
      const other = await signedIn();
      const theirs = await sessionToken(p.urls.api, await tokenFor(other.dashboard));
      const their = await http('GET', `${p.urls.api}/pat/login-activity`, { token: theirs });
      expect(their.body.logins.map((l: { tokenId: string }) => l.tokenId)).not.toContain(tokenId);

      // And the dashboard shows it too.
      const page = await dashboard.request('GET', '/en/developer');
      expect(page.body).toContain('script/4');
      expect(page.body).toContain('outcome-FAILURE');
    });

    it('answers 400 naming the field for a bad limit, cursor or date, and 401 without a session', async () => {
      const { dashboard } = await signedIn();
      const token = await tokenFor(dashboard);
      await patLogin(p.urls.api, token);
      await patLogin(p.urls.api, token);
      const session = await sessionToken(p.urls.api, token);
      const list = (query: string) => http('GET', `${p.urls.api}/pat/login-activity${query}`, { token: session });
      const cursor = (await list('?limit=1')).body.nextCursor as string;
      const tampered = (cursor[0] === 'a' ? 'b' : 'a') + cursor.slice(1);
      const cases: Array<[string, string]> = [
        ['?limit=0', 'limit'],
        ['?limit=101', 'limit'],
        ['?limit=ten', 'limit'],
        ['?cursor=garbage', 'cursor'],
        [`?cursor=${encodeURIComponent(tampered)}`, 'cursor'],
        ['?from=2026-02-30', 'from'],
        ['?to=yesterday', 'to'],
        [`?from=${utcDate(1)}&to=${utcDate(0)}`, 'from'],
      ];
      for (const [query, field] of cases) {
        const res = await list(query);
        expect({ query, status: res.status, code: res.body.code, field: res.body.field }).toEqual({
          query,
          status: 400,
          code: 'BAD_USER_INPUT',
          field,
        });
        expect(res.headers.get('content-type')).toContain('application/problem+json');
      }
      expect((await list('?limit=100')).status).toBe(200);
      expect((await http('GET', `${p.urls.api}/pat/login-activity`)).status).toBe(401);
    });
  });
});
