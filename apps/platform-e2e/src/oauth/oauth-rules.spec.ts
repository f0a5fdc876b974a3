import { Client } from 'pg';
import { withDatabaseName } from '@trading/db';
import { connectStore } from '@trading/redis';
import { http, TEST_POSTGRES_URL, TEST_REDIS_URL, testKeyPrefix } from '@trading/testing';
import { DEMO_USERS } from '@trading/platform';
import { until } from '../support/orders-platform';
import {
  admin,
  authorizationCode,
  exchange,
  extraAuth,
  loginPath,
  pkce,
  provisionApp,
  refresh,
  refusalCounts,
  registration,
  tokenRequest,
  tokensFor,
  UserAgent,
  type ProvisionedApp,
} from '../support/oauth-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const alice = { email: DEMO_USERS[0]!.email, password: DEMO_USERS[0]!.password };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every OAuth rule (authorization requests, codes, refresh tokens, clients and environments, the registry), each tested from outside: HTTP against the running platform. */
describe('OAuth rules', () => {
  let p: TestPlatform;
  let app: ProvisionedApp;
  let db: Client;
  const api = () => p.urls.api;
  const accountsWith = (token: string) => http('GET', `${api()}/accounts`, { token }).then((r) => r.status);

  beforeAll(async () => {
    p = await startTestPlatform();
    app = await provisionApp(p, {
      redirectUris: ['https://vendor.example/callback', 'http://127.0.0.1:9999/cb'],
      scopes: ['read:accounts', 'read:banking'],
    });
    db = new Client({ connectionString: withDatabaseName(TEST_POSTGRES_URL, `${p.config.PLATFORM_DB_PREFIX}auth`) });
    await db.connect();
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await p?.stop();
  });

  describe('the authorization request', () => {
    const { challenge } = pkce();
    const valid = () => ({
      clientId: app.clientId,
      redirectUri: app.redirectUri,
      scopes: 'read:accounts',
      state: 'st-1',
      challenge,
      method: 'S256',
    });

    it('shows an error page, never a redirect, for an unknown client or an unregistered redirect URI (exact match)', async () => {
      const ua = new UserAgent(p.urls.login);
      for (const bad of [
        { clientId: 'tci_dev_nope' },
        { redirectUri: 'https://evil.example/callback' },
        { redirectUri: 'https://vendor.example/callback/' },
        { redirectUri: 'https://VENDOR.example/callback' },
        { redirectUri: 'https://vendor.example/callback?x=1' },
        { redirectUri: 'http://127.0.0.1:9998/cb' },
      ]) {
        const res = await ua.request('GET', loginPath({ ...valid(), ...bad }));
        expect([res.status, res.location]).toEqual([400, undefined]);
        expect(res.body).toContain('This sign-in link does not work');
      }
    });

    it('redirects back with error, error_description and state for every other problem', async () => {
      const ua = new UserAgent(p.urls.login);
      const cases: Array<[Partial<ReturnType<typeof valid>> & { extra?: Record<string, string> }, string, RegExp]> = [
        [{ method: 'plain' }, 'invalid_request', /plain is not allowed/],
        [{ method: undefined }, 'invalid_request', /S256/],
        [{ challenge: undefined }, 'invalid_request', /code_challenge is required/],
        [{ challenge: 'too-short' }, 'invalid_request', /43 characters/],
        [{ scopes: 'read:accounts,write:orders' }, 'invalid_scope', /not approved for write:orders/],
        [{ scopes: 'read:accounts,admin' }, 'invalid_scope', /"admin" is not a scope/],
        [{ scopes: undefined }, 'invalid_scope', /scopes is required/],
        [{ extra: { response_type: 'token' } }, 'unsupported_response_type', /code/],
      ];
      for (const [change, error, description] of cases) {
        const res = await ua.request('GET', loginPath({ ...valid(), ...change }));
        expect(res.status).toBe(303);
        const back = new URL(res.location!);
        expect(`${back.origin}${back.pathname}`).toBe(app.redirectUri);
        expect(back.searchParams.get('error')).toBe(error);
        expect(back.searchParams.get('error_description')).toMatch(description);
        expect(back.searchParams.get('state')).toBe('st-1');
        expect(back.searchParams.get('iss')).toBe(`http://localhost:${p.config.AUTH_PORT}`);
      }
      const repeated = await ua.request('GET', `${loginPath(valid())}&scopes=read:banking`);
      expect(new URL(repeated.location!).searchParams.get('error')).toBe('invalid_request');
    });

    it('checks before showing anything, then signs in (HttpOnly, SameSite cookies; no framing) and asks for consent; deny returns access_denied', async () => {
      const ua = new UserAgent(p.urls.login);
      const first = await ua.request('GET', loginPath(valid()));
      expect(first.status).toBe(303);
      expect(first.location).toMatch(/^\/en\/signin\?next=%2Fen%2Flogin%3F/);
      const page = await ua.open(loginPath(valid()), alice);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(page.headers.get('content-security-policy')).toContain("form-action 'self' https://vendor.example");
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.body).toContain('E2E Portfolio App wants to access your Trading API account');
      expect(page.body).toContain('See your accounts, positions, margin and profile');
      const signin = await ua.request('POST', '/en/signin', { _csrf: 'x', email: alice.email, password: alice.password });
      expect(signin.status).toBe(403); // CSRF
      const session = (await fetchSetCookies(p.urls.login, alice)).find((c) => c.startsWith('tapi_session='))!;
      expect(session).toMatch(/HttpOnly/);
      expect(session).toMatch(/SameSite=Lax/);

      // A forged consent answer (wrong CSRF token) does nothing.
      const request = /name="request" value="([^"]+)"/.exec(page.body)![1]!;
      expect((await ua.request('POST', '/en/login/consent', { _csrf: 'forged', request, decision: 'approve' })).status).toBe(403);
      const denied = await ua.answer(page, 'deny');
      const back = new URL(denied.location!);
      expect([back.searchParams.get('error'), back.searchParams.get('state'), back.searchParams.get('code')]).toEqual([
        'access_denied',
        'st-1',
        null,
      ]);
      // The consent request is answered once only.
      expect((await ua.answer(page, 'approve')).status).toBe(400);
    });
  });

  describe('codes', () => {
    it('refuse a wrong, short, malformed or missing verifier without being spent', async () => {
      const c = await authorizationCode(p, app, alice);
      const base = {
        grant_type: 'AUTH_CODE',
        code: c.code,
        redirect_uri: c.redirectUri,
        client_id: app.clientId,
        client_secret: app.clientSecret,
      };
      for (const [verifier, status, error] of [
        [pkce().verifier, 400, 'invalid_grant'],
        [c.verifier.slice(0, 42), 400, 'invalid_grant'],
        [c.verifier.slice(0, 42) + '!', 400, 'invalid_grant'],
        ['a'.repeat(129), 400, 'invalid_grant'],
        [undefined, 400, 'invalid_request'],
      ] as const) {
        const res = await tokenRequest(`${api()}/oauth/token`, verifier === undefined ? base : { ...base, code_verifier: verifier });
        expect([res.status, res.body.error]).toEqual([status, error]);
      }
      expect((await exchange(p, app, c)).status).toBe(200);
    });

    it('are bound to the redirect URI and the client', async () => {
      const other = await provisionApp(p);
      const c = await authorizationCode(p, app, alice);
      expect((await exchange(p, app, { ...c, redirectUri: 'http://127.0.0.1:9999/cb' })).body.error).toBe('invalid_grant');
      expect((await exchange(p, other, c)).body.error).toBe('invalid_grant');
      expect((await exchange(p, app, c)).status).toBe(200);
    });

    it('work once: a second use revokes what the first issued', async () => {
      const c = await authorizationCode(p, app, alice);
      const first = await exchange(p, app, c);
      expect(first.status).toBe(200);
      expect(await accountsWith(first.body.access_token)).toBe(200);
      const again = await exchange(p, app, c);
      expect([again.status, again.body.error]).toEqual([400, 'invalid_grant']);
      expect(again.body.error_description).toMatch(/already used/);
      expect(await accountsWith(first.body.access_token)).toBe(401);
      expect((await refresh(api(), app, first.body.refresh_token)).body.error).toBe('invalid_grant');
    });

    it('redeemed concurrently: at most one exchange gets tokens, and the reuse ends that grant too', async () => {
      const c = await authorizationCode(p, app, alice);
      const results = await Promise.all(Array.from({ length: 6 }, () => exchange(p, app, c)));
      const winners = results.filter((r) => r.status === 200);
      expect(winners.length).toBeLessThanOrEqual(1);
      expect(results.filter((r) => r.body.error === 'invalid_grant')).toHaveLength(6 - winners.length);
      for (const w of winners) {
        expect(await accountsWith(w.body.access_token)).toBe(401);
        expect((await refresh(api(), app, w.body.refresh_token)).body.error).toBe('invalid_grant');
      }
    });

    it('expire (OAUTH_CODE_TTL_SECONDS)', async () => {
      const short = await extraAuth(p, { OAUTH_CODE_TTL_SECONDS: 1 });
      try {
        const ua = new UserAgent(short.url);
        const { verifier, challenge } = pkce();
        const page = await ua.open(
          loginPath({
            clientId: app.clientId,
            redirectUri: app.redirectUri,
            scopes: 'read:accounts',
            state: 's',
            challenge,
            method: 'S256',
          }),
          alice,
        );
        const code = new URL((await ua.answer(page, 'approve')).location!).searchParams.get('code')!;
        await sleep(1200);
        const res = await exchange(p, app, { code, verifier, redirectUri: app.redirectUri });
        expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
      } finally {
        await short.close();
      }
    });
  });

  describe('refresh tokens', () => {
    it('are single use: a retry within the window gets the same pair again; once the new refresh token is used, a reuse revokes the grant', async () => {
      const tokens = await tokensFor(p, app, alice);
      const next = await refresh(api(), app, tokens.refresh_token);
      expect(next.status).toBe(200);
      // Right after its use (a lost response, retried): the same answer again, nobody logged out.
      const retry = await refresh(api(), app, tokens.refresh_token);
      expect(retry).toMatchObject({ status: 200, body: { access_token: next.body.access_token, refresh_token: next.body.refresh_token } });
      // Another client presenting it is refused before any of that, and ends nothing.
      expect((await refresh(api(), await provisionApp(p), tokens.refresh_token)).body.error).toBe('invalid_grant');
      // Once the new refresh token has been used, the client has moved on: the old one again is a thief's.
      const third = await refresh(api(), app, next.body.refresh_token);
      expect(third.status).toBe(200);
      const reused = await refresh(api(), app, tokens.refresh_token);
      expect([reused.status, reused.body.error]).toEqual([400, 'invalid_grant']);
      expect(await accountsWith(third.body.access_token)).toBe(401);
      expect(await accountsWith(next.body.access_token)).toBe(401);
      expect((await refresh(api(), app, third.body.refresh_token)).body.error).toBe('invalid_grant');
    });

    it('a retry 15 s later gets the same pair while it is unused; once its access token has been used, the retry revokes the grant', async () => {
      const tokens = await tokensFor(p, app, alice);
      const next = await refresh(api(), app, tokens.refresh_token);
      expect(next.status).toBe(200);
      await sleep(15_000); // a vendor whose refresh timed out, retrying late
      const late = await refresh(api(), app, tokens.refresh_token);
      expect(late).toMatchObject({ status: 200, body: { access_token: next.body.access_token, refresh_token: next.body.refresh_token } });

      // The client used what it got (one call through the facade): a retry now can only be someone else's.
      expect(await accountsWith(next.body.access_token)).toBe(200);
      const reused = await refresh(api(), app, tokens.refresh_token);
      expect([reused.status, reused.body.error]).toEqual([400, 'invalid_grant']);
      expect(reused.body.error_description).toMatch(/have been used since; the grant has been revoked/);
      expect(await accountsWith(next.body.access_token)).toBe(401);
      expect((await refresh(api(), app, next.body.refresh_token)).body.error).toBe('invalid_grant');
    }, 30_000);

    it('an access token used through GraphQL closes the window too (the gateway is an edge as well)', async () => {
      const tokens = await tokensFor(p, app, alice);
      const next = await refresh(api(), app, tokens.refresh_token);
      const graphql = await http('POST', p.urls.gateway, { token: next.body.access_token, body: { query: '{ __typename }' } });
      expect(graphql.status).toBe(200);
      expect((await refresh(api(), app, tokens.refresh_token)).body.error).toBe('invalid_grant');
    });

    it('a retry after the window (OAUTH_REFRESH_REUSE_GRACE_SECONDS, 60 by default; 1 here) revokes the grant', async () => {
      const strict = await extraAuth(p, { OAUTH_REFRESH_REUSE_GRACE_SECONDS: 1 });
      try {
        const tokens = await tokensFor(p, app, alice);
        const next = await refresh(strict.url, app, tokens.refresh_token);
        expect(next.status).toBe(200);
        expect((await refresh(strict.url, app, tokens.refresh_token)).body.access_token).toBe(next.body.access_token); // within it
        await sleep(1100);
        const reused = await refresh(strict.url, app, tokens.refresh_token);
        expect([reused.status, reused.body.error]).toEqual([400, 'invalid_grant']);
        expect(await accountsWith(next.body.access_token)).toBe(401);
        expect((await refresh(strict.url, app, next.body.refresh_token)).body.error).toBe('invalid_grant');
      } finally {
        await strict.close();
      }
    });

    it("note the grant's last use to the minute (a refresh is no database write within it), and never refresh a revoked grant", async () => {
      const tokens = await tokensFor(p, app, alice);
      const lastUsed = async () =>
        (
          await db.query(
            `SELECT id, last_used_at FROM oauth_grants WHERE user_id = (SELECT id FROM users WHERE email = $1) ORDER BY created_at DESC LIMIT 1`,
            [alice.email],
          )
        ).rows[0] as { id: string; last_used_at: Date };
      const issued = await lastUsed();
      expect(issued.last_used_at).toBeInstanceOf(Date);
      const first = await refresh(api(), app, tokens.refresh_token);
      expect(first.status).toBe(200);
      expect((await lastUsed()).last_used_at).toEqual(issued.last_used_at); // within the minute: untouched
      await db.query(`UPDATE oauth_grants SET last_used_at = now() - interval '61 seconds' WHERE id = $1`, [issued.id]);
      const second = await refresh(api(), app, first.body.refresh_token);
      expect(second.status).toBe(200);
      expect((await lastUsed()).last_used_at.getTime()).toBeGreaterThan(Date.now() - 30_000); // the minute turned: noted
      await db.query(`UPDATE oauth_grants SET revoked_at = now(), revoked_reason = 'USER' WHERE id = $1`, [issued.id]);
      expect((await refresh(api(), app, second.body.refresh_token)).body.error).toBe('invalid_grant');
    });

    it('used concurrently: exactly one rotation happens, and every request gets its pair', async () => {
      const tokens = await tokensFor(p, app, alice);
      const results = await Promise.all(Array.from({ length: 10 }, () => refresh(api(), app, tokens.refresh_token)));
      expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
      expect(new Set(results.map((r) => r.body.refresh_token)).size).toBe(1);
      const winner = results[0]!;
      // Ten concurrent retries of the spent token (the pair still unused): the same pair each time, nothing minted.
      const retries = await Promise.all(Array.from({ length: 10 }, () => refresh(api(), app, tokens.refresh_token)));
      expect(retries.map((r) => [r.status, r.body.access_token, r.body.refresh_token])).toEqual(
        Array(10).fill([200, winner.body.access_token, winner.body.refresh_token]),
      );
      expect(await accountsWith(winner.body.access_token)).toBe(200);
      expect((await refresh(api(), app, winner.body.refresh_token)).status).toBe(200);
    });

    it('are bound to their client and expire (OAUTH_REFRESH_TOKEN_TTL_SECONDS)', async () => {
      const other = await provisionApp(p);
      const tokens = await tokensFor(p, app, alice);
      expect((await refresh(api(), other, tokens.refresh_token)).body.error).toBe('invalid_grant');
      expect((await refresh(api(), app, tokens.refresh_token)).status).toBe(200); // not spent by the other client's attempt

      const short = await extraAuth(p, { OAUTH_REFRESH_TOKEN_TTL_SECONDS: 1 });
      try {
        const ua = new UserAgent(short.url);
        const { verifier, challenge } = pkce();
        const page = await ua.open(
          loginPath({
            clientId: app.clientId,
            redirectUri: app.redirectUri,
            scopes: 'read:accounts',
            state: 's',
            challenge,
            method: 'S256',
          }),
          alice,
        );
        const code = new URL((await ua.answer(page, 'approve')).location!).searchParams.get('code')!;
        const issued = await tokenRequest(`${short.url}/oauth/token`, {
          grant_type: 'AUTH_CODE',
          code,
          redirect_uri: app.redirectUri,
          client_id: app.clientId,
          client_secret: app.clientSecret,
          code_verifier: verifier,
        });
        expect(issued.status).toBe(200);
        await sleep(1200);
        expect((await refresh(short.url, app, issued.body.refresh_token)).body.error).toBe('invalid_grant');
      } finally {
        await short.close();
      }
    });
  });

  describe('clients and environments', () => {
    // Behind a trusted proxy, so the spec can speak from several client addresses.
    const tokenCall = (url: string, client: { clientId: string; clientSecret: string }, from: string) =>
      http('POST', `${url}/oauth/token`, {
        body: {
          grant_type: 'REFRESH_TOKEN',
          refresh_token: 'trt_' + 'x'.repeat(43),
          client_id: client.clientId,
          client_secret: client.clientSecret,
        },
        headers: { 'x-forwarded-for': from },
      });

    it('abuse: a stranger failing with a public client_id is throttled at their address; the vendor, and the right secret anywhere, are never refused', async () => {
      const vendor = await provisionApp(p);
      const strict = await extraAuth(p, { OAUTH_CLIENT_MAX_FAILURES: 3, AUTH_TRUST_PROXY: ['loopback'] });
      try {
        const guess = () => tokenCall(strict.url, { ...vendor, clientSecret: 'wrong' }, '198.51.100.66');
        for (let i = 0; i < 3; i++) expect((await guess()).body.error).toBe('invalid_client');
        const throttled = await guess();
        expect(throttled).toMatchObject({ status: 429, body: { error: 'temporarily_unavailable' } });
        expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
        // The right secret passes client authentication from the attacker's address too (then the made-up refresh token is refused) …
        expect((await tokenCall(strict.url, vendor, '198.51.100.66')).body.error).toBe('invalid_grant');
        // … and the vendor's own backend, elsewhere, never notices.
        for (let i = 0; i < 5; i++) expect((await tokenCall(strict.url, vendor, '203.0.113.10')).body.error).toBe('invalid_grant');
        expect(await refusalCounts(strict.internalUrl)).toMatchObject({ oauth_client_auth_failures: 1, oauth_address: 0 });
      } finally {
        await strict.close();
      }
    });

    it('abuse: one address failing across many client_ids is throttled by its own budget, counted as such', async () => {
      const strict = await extraAuth(p, { OAUTH_TOKEN_MAX_FAILURES_PER_IP: 2, AUTH_TRUST_PROXY: ['loopback'] });
      try {
        const guess = (n: number) => tokenCall(strict.url, { clientId: `tci_dev_guess${n}`, clientSecret: 'wrong' }, '198.51.100.77');
        for (let n = 0; n < 2; n++) expect((await guess(n)).body.error).toBe('invalid_client');
        expect(await guess(2)).toMatchObject({ status: 429, body: { error: 'temporarily_unavailable' } });
        expect(await refusalCounts(strict.internalUrl)).toMatchObject({ oauth_address: 1, oauth_client_auth_failures: 0 });
      } finally {
        await strict.close();
      }
    });

    it('budgets successful calls per authenticated app, not per address (a backend refreshing for many users from one server)', async () => {
      const store = await connectStore(TEST_REDIS_URL, { keyPrefix: testKeyPrefix() });
      const [busy, other] = [await provisionApp(p), await provisionApp(p)];
      const limited = await extraAuth(p, { OAUTH_TOKEN_MAX_REQUESTS_PER_CLIENT: 3, AUTH_TRUST_PROXY: ['loopback'] }, store);
      try {
        const statuses = [];
        for (let i = 0; i < 4; i++) statuses.push(await tokenCall(limited.url, busy, '203.0.113.20'));
        expect(statuses.map((r) => r.status)).toEqual([400, 400, 400, 429]);
        expect(statuses[3]!.body.error).toBe('temporarily_unavailable');
        expect(statuses[3]!.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(await refusalCounts(limited.internalUrl)).toMatchObject({ oauth_client: 1, oauth_client_auth_failures: 0 });
        expect(statuses[0]!.headers.get('ratelimit-remaining')).toBe('2');
        // Another app from the same address has its own budget.
        expect((await tokenCall(limited.url, other, '203.0.113.20')).status).toBe(400);
      } finally {
        await limited.close();
        await store.close();
      }
    });

    it("accept only this deployment's environment's credentials and redirect URIs", async () => {
      const promoted = await provisionApp(p);
      const uat = await admin(p, 'POST', `/apps/${promoted.appId}/promote`, { redirectUris: ['https://uat.vendor.example/callback'] });
      expect(uat.status).toBe(201);
      expect(uat.body.clientId).toMatch(/^tci_uat_/);
      const uatApp: ProvisionedApp = {
        appId: promoted.appId,
        clientId: uat.body.clientId,
        clientSecret: uat.body.clientSecret,
        redirectUri: 'https://uat.vendor.example/callback',
      };
      const { challenge } = pkce();
      const ua = new UserAgent(p.urls.login);

      // The DEV deployment (the platform) knows nothing of UAT credentials.
      expect((await refresh(api(), uatApp, 'trt_' + 'x'.repeat(43))).status).toBe(401);
      const devPage = await ua.request(
        'GET',
        loginPath({ clientId: uatApp.clientId, redirectUri: uatApp.redirectUri, scopes: 'read:accounts', challenge, method: 'S256' }),
      );
      expect([devPage.status, devPage.location]).toEqual([400, undefined]);

      // Outside DEV, secrets go only by SMTP: no SMTP_URL, no start.
      await expect(extraAuth(p, { APP_ENV: 'UAT' })).rejects.toThrow(/SMTP_URL/);
      const uatAuth = await extraAuth(p, { APP_ENV: 'UAT', SMTP_URL: 'smtp://127.0.0.1:9' });
      try {
        // …and the UAT deployment refuses DEV's client, secret and redirect URI.
        expect((await refresh(uatAuth.url, promoted, 'trt_' + 'x'.repeat(43))).status).toBe(401);
        const uatUa = new UserAgent(uatAuth.url);
        expect(
          (
            await uatUa.request(
              'GET',
              loginPath({
                clientId: promoted.clientId,
                redirectUri: promoted.redirectUri,
                scopes: 'read:accounts',
                challenge,
                method: 'S256',
              }),
            )
          ).status,
        ).toBe(400);
        expect(
          (
            await uatUa.request(
              'GET',
              loginPath({
                clientId: uatApp.clientId,
                redirectUri: promoted.redirectUri,
                scopes: 'read:accounts',
                challenge,
                method: 'S256',
              }),
            )
          ).status,
        ).toBe(400);
        // Its own credentials work end to end.
        const { verifier, challenge: c2 } = pkce();
        const page = await uatUa.open(
          loginPath({
            clientId: uatApp.clientId,
            redirectUri: uatApp.redirectUri,
            scopes: 'read:accounts',
            state: 'u',
            challenge: c2,
            method: 'S256',
          }),
          alice,
        );
        const code = new URL((await uatUa.answer(page, 'approve')).location!).searchParams.get('code')!;
        const tokens = await tokenRequest(`${uatAuth.url}/oauth/token`, {
          grant_type: 'AUTH_CODE',
          code,
          redirect_uri: uatApp.redirectUri,
          client_id: uatApp.clientId,
          client_secret: uatApp.clientSecret,
          code_verifier: verifier,
        });
        expect(tokens.status).toBe(200);
      } finally {
        await uatAuth.close();
      }
    });

    it('suspending an app revokes its grants at once and refuses its clients', async () => {
      const vendor = await provisionApp(p);
      const tokens = await tokensFor(p, vendor, alice);
      expect(await accountsWith(tokens.access_token)).toBe(200);
      const suspended = await admin(p, 'POST', `/apps/${vendor.clientId}/suspend`);
      expect(suspended.body).toMatchObject({ status: 'SUSPENDED', grantsRevoked: 1 });
      expect(await accountsWith(tokens.access_token)).toBe(401);
      expect((await refresh(api(), vendor, tokens.refresh_token)).body.error).toBe('unauthorized_client');
      const { challenge } = pkce();
      const page = await new UserAgent(p.urls.login).request(
        'GET',
        loginPath({
          clientId: vendor.clientId,
          redirectUri: vendor.redirectUri,
          scopes: 'read:accounts',
          state: 'z',
          challenge,
          method: 'S256',
        }),
      );
      expect(new URL(page.location!).searchParams.get('error')).toBe('unauthorized_client');
    });
  });

  describe('the registry', () => {
    const outboxFor = (email: string) =>
      db.query(`SELECT subject, body, secret, sent_at FROM email_outbox WHERE to_address = $1 ORDER BY id`, [email]).then((r) => r.rows);

    it('validates every field of a registration, reports each by name, and creates nothing when any is wrong', async () => {
      const before = (await admin(p, 'GET', '/apps')).body.apps.length;
      const bad = registration({
        companyName: ' ',
        companyWebsite: 'not a url',
        businessEmail: 'ops-at-vendor',
        country: 'XX',
        phone: 'call me',
        logoUrl: 'javascript:alert(1)',
        supportUrl: 'ftp://vendor.example',
        redirectUris: ['http://vendor.example/cb', 'https://vendor.example/cb#frag', 'https://*.vendor.example/cb'],
        scopes: ['read:accounts', 'trade:everything'],
        homepageUrl: undefined,
        website: 'typo',
      });
      const res = await admin(p, 'POST', '/apps', { registration: bad });
      expect(res.status).toBe(422);
      const fields = (res.body.problems as Array<{ field: string }>).map((x) => x.field).sort();
      expect(fields).toEqual(
        [
          'businessEmail',
          'companyName',
          'companyWebsite',
          'country',
          'homepageUrl',
          'logoUrl',
          'phone',
          'redirectUris[0]',
          'redirectUris[1]',
          'redirectUris[2]',
          'scopes[1]',
          'supportUrl',
          'website',
        ].sort(),
      );
      expect((await admin(p, 'POST', '/apps', { registration: registration({ redirectUris: [] }) })).body.problems).toEqual([
        { field: 'redirectUris', message: expect.stringContaining('one or more') },
      ]);
      expect(
        (await admin(p, 'POST', '/apps', { registration: registration({ scopes: ['read:accounts'] }), approvedScopes: ['read:banking'] }))
          .status,
      ).toBe(422);
      expect((await admin(p, 'GET', '/apps')).body.apps.length).toBe(before);
      expect(await outboxFor((bad['businessEmail'] as string).toLowerCase())).toEqual([]);
    });

    it('provisions in DEV with a secret shown once, stored only hashed, mailed through the outbox', async () => {
      const doc = registration();
      const res = await admin(p, 'POST', '/apps', { registration: doc, approvedScopes: ['read:accounts'] });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        environment: 'DEV',
        clientId: expect.stringMatching(/^tci_dev_/),
        clientSecret: expect.stringMatching(/^tcs_/),
        approvedScopes: ['read:accounts'],
      });
      const stored = await db.query(`SELECT secret_hash FROM vendor_app_credentials WHERE client_id = $1`, [res.body.clientId]);
      expect(stored.rows[0].secret_hash).not.toContain(res.body.clientSecret);
      const listed = JSON.stringify((await admin(p, 'GET', '/apps')).body);
      expect(listed).toContain(res.body.clientId);
      expect(listed).not.toContain(res.body.clientSecret);

      const [mail] = await outboxFor(doc['businessEmail'] as string);
      expect(mail.subject).toBe('E2E Portfolio App: DEV credentials for the Trading API');
      expect(mail.body).toContain(res.body.clientId);
      await p.auth.mail.runOnce();
      // The dispatcher's own pass may hold the row (SKIP LOCKED) when runOnce comes: wait for whichever delivers it.
      const [sent] = await until(
        () => outboxFor(doc['businessEmail'] as string),
        ([row]) => row?.sent_at !== null,
        'the credentials mail to be delivered',
      );
      expect(sent.sent_at).not.toBeNull();
      expect(sent.secret).toBeNull(); // the plain secret lived in the outbox only until delivery
    });

    it('promotes DEV → UAT → PROD in order only, each with its own credentials and redirect URIs', async () => {
      const vendor = await provisionApp(p);
      const promote = (body: Record<string, unknown>) => admin(p, 'POST', `/apps/${vendor.appId}/promote`, body);
      const skip = await promote({ to: 'PROD', redirectUris: ['https://vendor.example/prod'] });
      expect([skip.status, skip.body.code]).toEqual([409, 'CONFLICT']);
      expect(skip.body.detail).toMatch(/DEV → UAT → PROD/);
      expect((await promote({ redirectUris: ['http://vendor.example/uat'] })).body.problems[0].field).toBe('redirectUris[0]');
      // Outside DEV the consent page's logo, privacy policy and terms must be https.
      const plain = await provisionApp(p, { logoUrl: 'http://vendor.example/logo.png', termsOfServiceUrl: 'http://vendor.example/terms' });
      const refused = await admin(p, 'POST', `/apps/${plain.appId}/promote`, { redirectUris: ['https://vendor.example/uat'] });
      expect(refused.status).toBe(422);
      expect(refused.body.problems.map((x: { field: string }) => x.field)).toEqual(['logoUrl', 'termsOfServiceUrl']);
      expect(refused.body.problems[0].message).toMatch(/https URL outside DEV .*--logo-url/);
      const fixed = await admin(p, 'POST', `/apps/${plain.appId}/promote`, {
        redirectUris: ['https://vendor.example/uat'],
        pages: { logoUrl: 'https://vendor.example/logo.png', termsOfServiceUrl: 'https://vendor.example/terms' },
      });
      expect(fixed).toMatchObject({ status: 201, body: { environment: 'UAT' } });
      const uat = await promote({ to: 'UAT', redirectUris: ['https://vendor.example/uat'] });
      const prod = await promote({ redirectUris: ['https://vendor.example/prod'] });
      expect([uat.body.environment, prod.body.environment]).toEqual(['UAT', 'PROD']);
      expect(new Set([vendor.clientId, uat.body.clientId, prod.body.clientId]).size).toBe(3);
      expect((await promote({ redirectUris: ['https://vendor.example/more'] })).status).toBe(409);
      const listed = (await admin(p, 'GET', '/apps')).body.apps.find((a: { appId: string }) => a.appId === vendor.appId);
      expect(listed.environments.map((e: { environment: string; redirectUris: string[] }) => [e.environment, e.redirectUris])).toEqual([
        ['DEV', ['https://vendor.example/callback']],
        ['UAT', ['https://vendor.example/uat']],
        ['PROD', ['https://vendor.example/prod']],
      ]);
    });

    it('a trading app promoted to PROD requires a second factor to consent, unless told not to; a reading app does not, unless told to', async () => {
      const promote = (app: { appId: string }, policy: Record<string, unknown> = {}) =>
        admin(p, 'POST', `/apps/${app.appId}/promote`, { redirectUris: ['https://vendor.example/next'], policy });
      const second = async (app: { appId: string }, uat: Record<string, unknown> = {}, prod: Record<string, unknown> = {}) => [
        (await promote(app, uat)).body.requireSecondFactor,
        (await promote(app, prod)).body.requireSecondFactor,
      ];
      const trading = await provisionApp(p, { scopes: ['read:accounts', 'write:orders'] });
      expect(await second(trading)).toEqual([false, true]);
      const optedOut = await provisionApp(p, { scopes: ['read:accounts', 'write:banking'] });
      expect(await second(optedOut, {}, { requireSecondFactor: false })).toEqual([false, false]);
      const reading = await provisionApp(p, { scopes: ['read:accounts'] });
      expect(await second(reading, { requireSecondFactor: true })).toEqual([true, false]);
      const bad = await promote(await provisionApp(p), { requireSecondFactor: 'yes' });
      expect([bad.status, bad.body.problems?.[0]?.field]).toEqual([422, 'requireSecondFactor']);
    });

    it('rotates a secret: the new one works at once, the old one no longer', async () => {
      const vendor = await provisionApp(p);
      const rotated = await admin(p, 'POST', `/apps/${vendor.clientId}/rotate-secret`);
      expect(rotated.body).toMatchObject({ environment: 'DEV', clientId: vendor.clientId });
      expect((await refresh(api(), vendor, 'trt_' + 'x'.repeat(43))).status).toBe(401);
      expect((await refresh(api(), { ...vendor, clientSecret: rotated.body.clientSecret }, 'trt_' + 'x'.repeat(43))).status).toBe(400); // authenticated; the token is what is wrong
    });
  });
});

/** The Set-Cookie lines of a successful sign-in. */
async function fetchSetCookies(loginUrl: string, user: { email: string; password: string }): Promise<string[]> {
  const ua = new UserAgent(loginUrl);
  const page = await ua.request('GET', '/en/signin');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
  const cookie = page.headers
    .getSetCookie()
    .map((l) => l.split(';')[0])
    .join('; ');
  const res = await fetch(`${loginUrl}/en/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ _csrf: csrf, email: user.email, password: user.password }),
  });
  return res.headers.getSetCookie();
}
