import { fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { http } from '@trading/testing';
import { DEMO_USERS } from '@trading/platform';
import { exchange, loginPath, pkce, provisionApp, refresh, UserAgent, type ProvisionedApp } from '../support/oauth-helpers';
import { patSession } from '../support/sessions';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const alice = { email: DEMO_USERS[0]!.email, password: DEMO_USERS[0]!.password };

/** OpenID Connect Core sign-in (openid, profile, email), ID tokens, discovery, userinfo. */
describe('OpenID Connect sign-in', () => {
  let p: TestPlatform;
  let app: ProvisionedApp;
  let issuer: string;

  /** Through the consent page with `scopes` (and a nonce, unless null): the code's redirect and the tokens. */
  async function signIn(a: ProvisionedApp, scopes: string, nonce: string | null = `n-${Math.random()}`) {
    const { verifier, challenge } = pkce();
    const ua = new UserAgent(p.urls.login);
    const page = await ua.open(
      loginPath({
        clientId: a.clientId,
        redirectUri: a.redirectUri,
        scopes,
        state: 'st',
        challenge,
        method: 'S256',
        extra: nonce === null ? {} : { nonce },
      }),
      alice,
    );
    const back = new URL((await ua.answer(page, 'approve')).location!);
    const tokens = await exchange(p, a, { code: back.searchParams.get('code')!, verifier, redirectUri: a.redirectUri });
    expect(tokens.status).toBe(200);
    return { back, nonce, tokens: tokens.body, page };
  }
  const verifyIdToken = (idToken: string, audience: string) =>
    jwtVerify(idToken, createRemoteJWKSet(new URL(`${p.urls.login}/.well-known/jwks.json`)), {
      issuer,
      audience,
      typ: 'JWT',
      algorithms: ['ES256'],
    });

  beforeAll(async () => {
    p = await startTestPlatform();
    app = await provisionApp(p, { scopes: ['read:accounts'] });
    issuer = (await http('GET', `${p.urls.login}/.well-known/openid-configuration`)).body.issuer;
  }, 60_000);
  afterAll(() => p?.stop());

  it('issues an ES256 id_token verified with the JWKS: nonce round trip, at_hash, auth_time, pairwise sub, scoped claims', async () => {
    const before = Math.floor(Date.now() / 1000) - 5;
    const { back, nonce, tokens } = await signIn(app, 'openid,profile,email,read:accounts');
    expect(back.searchParams.get('iss')).toBe(issuer); // RFC 9207
    expect(tokens.scope).toBe('openid profile email read:accounts');
    const { payload, protectedHeader } = await verifyIdToken(tokens.id_token, app.clientId);
    expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'JWT', kid: expect.any(String) });
    const userId = (await p.auth.users.findByEmail(alice.email))!.id;
    expect(payload).toMatchObject({
      iss: issuer,
      aud: app.clientId,
      nonce,
      email: alice.email,
      email_verified: false,
      name: 'Alice Anders',
      given_name: 'Alice',
      family_name: 'Anders',
    });
    expect(payload.sub).not.toBe(userId);
    expect(payload.sub).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(payload['auth_time']).toBeGreaterThanOrEqual(before);
    expect(payload['auth_time']).toBeLessThanOrEqual(payload.iat!);
    expect(payload.exp! - payload.iat!).toBe(300);
    const half = createHash('sha256').update(tokens.access_token).digest().subarray(0, 16).toString('base64url');
    expect(payload['at_hash']).toBe(half);

    // The access token carries API scopes only (the edges know no others), and works there.
    const access = JSON.parse(Buffer.from(tokens.access_token.split('.')[1], 'base64url').toString());
    expect(access.scope).toBe('read:accounts');
    expect((await http('GET', `${p.urls.api}/accounts`, { token: tokens.access_token })).status).toBe(200);
    // An ID token is no access token.
    expect((await http('GET', `${p.urls.api}/accounts`, { token: tokens.id_token })).status).toBe(401);
    expect(decodeProtectedHeader(tokens.id_token).typ).not.toBe('at+jwt');
  });

  it('keeps sub stable for one app and different for another; no nonce asked, none given; no openid, no id_token', async () => {
    const first = await signIn(app, 'openid', null);
    const second = await signIn(app, 'openid');
    const a = (await verifyIdToken(first.tokens.id_token, app.clientId)).payload;
    const b = (await verifyIdToken(second.tokens.id_token, app.clientId)).payload;
    expect(a.sub).toBe(b.sub);
    expect(a['nonce']).toBeUndefined();
    expect(a['email']).toBeUndefined();
    expect(a['name']).toBeUndefined();
    const otherApp = await provisionApp(p, { scopes: ['read:accounts'] });
    const other = await signIn(otherApp, 'openid');
    expect((await verifyIdToken(other.tokens.id_token, otherApp.clientId)).payload.sub).not.toBe(a.sub);
    // Audience-bound: one app's ID token does not verify for another.
    await expect(verifyIdToken(other.tokens.id_token, app.clientId)).rejects.toThrow();

    const plain = await signIn(app, 'read:accounts');
    expect(plain.tokens.id_token).toBeUndefined();
    // A refresh of an openid grant brings a new ID token (same sub, the sign-in's auth_time, no nonce); of another, none.
    const refreshed = await refresh(p.urls.api, app, second.tokens.refresh_token);
    expect(refreshed.status).toBe(200);
    const renewed = (await verifyIdToken(refreshed.body.id_token, app.clientId)).payload;
    expect(renewed).toMatchObject({ sub: b.sub, auth_time: b['auth_time'] });
    expect(renewed['nonce']).toBeUndefined();
    expect((await refresh(p.urls.api, app, plain.tokens.refresh_token)).body.id_token).toBeUndefined();
  });

  it("answers userinfo per OIDC claims with the app's pairwise sub, with the spec fields but no user id under read:accounts", async () => {
    const only = await signIn(app, 'openid');
    const sub = (await verifyIdToken(only.tokens.id_token, app.clientId)).payload.sub;
    const me = await http('GET', `${p.urls.api}/oauth/userinfo`, { token: only.tokens.access_token });
    // How alice signed in (her password alone) is said as the ID token says it.
    const signedIn = { amr: ['pwd'], acr: 'urn:trading-api:acr:pwd' };
    expect([me.status, me.body]).toEqual([200, { sub, ...signedIn }]);

    const email = await signIn(app, 'openid,email');
    expect((await http('GET', `${p.urls.api}/oauth/userinfo`, { token: email.tokens.access_token })).body).toEqual({
      sub,
      ...signedIn,
      email: alice.email,
      email_verified: false,
    });
    const all = await signIn(app, 'openid,profile,read:accounts');
    expect((await http('GET', `${p.urls.api}/oauth/userinfo`, { token: all.tokens.access_token })).body).toEqual({
      sub,
      ...signedIn,
      name: 'Alice Anders',
      given_name: 'Alice',
      family_name: 'Anders',
      email: alice.email,
      firstName: 'Alice',
      lastName: 'Anders',
    });
    // Without openid too: the app's pairwise sub, never the platform's user id.
    const plain = await signIn(app, 'read:accounts');
    expect((await http('GET', `${p.urls.api}/oauth/userinfo`, { token: plain.tokens.access_token })).body).toEqual({
      sub,
      email: alice.email,
      firstName: 'Alice',
      lastName: 'Anders',
    });
  });

  it('publishes /.well-known/openid-configuration with the same truths as the RFC 8414 document', async () => {
    const oidc = await http('GET', `${p.urls.login}/.well-known/openid-configuration`);
    const oauth = await http('GET', `${p.urls.login}/.well-known/oauth-authorization-server`);
    expect(oidc.status).toBe(200);
    expect(oidc.body).toEqual(oauth.body);
    expect(oidc.body).toMatchObject({
      issuer,
      authorization_endpoint: expect.stringMatching(/\/v1\/oauth\/authorize$/),
      token_endpoint: expect.stringMatching(/\/v1\/oauth\/token$/),
      userinfo_endpoint: expect.stringMatching(/\/v1\/oauth\/userinfo$/),
      pushed_authorization_request_endpoint: expect.stringMatching(/\/v1\/oauth\/par$/),
      jwks_uri: `${issuer}/.well-known/jwks.json`,
      response_types_supported: ['code'],
      subject_types_supported: ['pairwise'],
      id_token_signing_alg_values_supported: ['ES256'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
      authorization_response_iss_parameter_supported: true,
      require_pushed_authorization_requests: false,
    });
    expect(oidc.body.scopes_supported).toEqual(expect.arrayContaining(['openid', 'profile', 'email', 'read:accounts']));
    expect(oidc.body.claims_supported).toEqual(
      expect.arrayContaining(['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', 'email', 'email_verified', 'name']),
    );
  });

  it('says on the consent page what openid, profile and email share, in every locale', async () => {
    const words: Record<string, string[]> = {
      en: ['Sign you in with your Trading API account', 'See your name', 'See your e-mail address'],
      de: ['Sie mit Ihrem Trading-API-Konto anmelden', 'Ihren Namen sehen', 'Ihre E-Mail-Adresse sehen'],
      fr: ['Vous connecter avec votre compte Trading API', 'Voir votre nom', 'Voir votre adresse e-mail'],
    };
    for (const [locale, expected] of Object.entries(words)) {
      const { challenge } = pkce();
      const page = await new UserAgent(p.urls.login).open(
        loginPath(
          {
            clientId: app.clientId,
            redirectUri: app.redirectUri,
            scopes: 'openid profile email',
            state: 's',
            challenge,
            method: 'S256',
          },
          locale,
        ),
        alice,
      );
      expect([locale, page.status]).toEqual([locale, 200]);
      const body = page.body.replace(/&#39;|&#x27;/g, "'");
      for (const scope of ['openid', 'profile', 'email']) expect(body).toContain(`data-scope="${scope}"`);
      for (const text of expected) expect([locale, body.includes(text)]).toEqual([locale, true]);
    }
  });

  /** The person's browser in an oauth4webapi flow: the authorization endpoint, the sign-in form when shown, the consent page. */
  async function drive(ua: UserAgent, url: string): Promise<{ callback: string; signInShown: boolean }> {
    const start = await fetch(url, { redirect: 'manual' });
    const login = new URL(start.headers.get('location')!, url);
    let res = await ua.request('GET', `${login.pathname}${login.search}`);
    let signInShown = false;
    if (res.status === 303 && res.location?.includes('/signin?next=')) {
      const form = await ua.request('GET', res.location);
      if (form.status === 200) {
        signInShown = true;
        const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)![1]!;
        const next = /name="next" value="([^"]+)"/.exec(form.body)![1]!.replace(/&amp;/g, '&');
        const posted = await ua.request('POST', new URL(res.location, p.urls.login).pathname, { _csrf: csrf, ...alice, next });
        expect(posted.status).toBe(303);
        res = await ua.request('GET', posted.location!);
      } else res = await ua.request('GET', form.location!);
    }
    // prompt=none answers at once, to the app.
    if (res.status === 303) return { callback: res.location!, signInShown };
    const answer = await ua.answer(res, 'approve');
    return { callback: answer.location!, signInShown };
  }

  it('behaves as certified providers do for a standards client (oauth4webapi): prompt=none, max_age, prompt=login, userinfo by POST, ID tokens on refresh, one sub per app everywhere', async () => {
    const [a, b] = [await provisionApp(p, { scopes: ['read:accounts'] }), await provisionApp(p, { scopes: ['read:accounts'] })];
    const userId = (await p.auth.users.findByEmail(alice.email))!.id;
    const signedIn = new UserAgent(p.urls.login);
    const child = fork(join(__dirname, '../support/fapi-client/oidc-client.mjs'), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: [],
    });
    const outcome = await new Promise<{ type: string; report?: { steps: Array<{ name: string }> }; error?: string; cause?: string }>(
      (resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`the client exited (${code})`)));
        child.on('message', (message: any) => {
          if (message.type === 'done' || message.type === 'failed') return resolve(message);
          const reply =
            message.type === 'ready'
              ? Promise.resolve({ issuer, authUrl: p.urls.login, api: p.urls.api, gateway: p.urls.gateway, apps: [a, b] })
              : drive(message.browser === 'new' ? new UserAgent(p.urls.login) : signedIn, message.url);
          reply.then((r) => child.send(r), reject);
        });
      },
    ).finally(() => child.kill());
    if (outcome.type !== 'done') throw new Error(`the client failed: ${outcome.error}\n${outcome.cause ?? ''}`);
    const steps: Record<string, any> = Object.fromEntries(outcome.report!.steps.map((s) => [s.name, s]));

    expect(steps['discovery'].prompts).toEqual(expect.arrayContaining(['none', 'login']));
    // prompt=none: no page, the answer to the redirect URI (state and iss checked by the library).
    expect(steps['none-signed-out']).toMatchObject({ error: 'login_required', signInShown: false, state: true });
    expect(steps['none-signed-in']).toMatchObject({ error: 'consent_required', signInShown: false, state: true });
    // max_age=1 three seconds after the sign-in, and prompt=login: the form again, and an auth_time of that new sign-in.
    expect(steps['max-age'].signInShown).toBe(true);
    expect(steps['max-age'].authTime).toBeGreaterThanOrEqual(steps['max-age'].asked);
    expect(steps['prompt-login'].signInShown).toBe(true);
    expect(steps['prompt-login'].authTime).toBeGreaterThanOrEqual(steps['prompt-login'].asked);
    // A refresh: a new ID token for the same sign-in (sub, auth_time), issued now, without the nonce.
    expect(steps['refresh'].idToken).toEqual({
      sub: steps['app-a'].idTokenSub,
      authTime: steps['app-a'].authTime,
      iat: expect.any(Number),
      nonce: null,
    });
    expect(steps['refresh'].idToken.iat).toBeGreaterThan(steps['refresh'].firstIat);

    // One sub per app, the same in its access token, its ID token and userinfo (by POST); never the platform's user id.
    const [subA, subB] = [steps['app-a'].idTokenSub, steps['app-b'].idTokenSub];
    expect(steps['app-a']).toMatchObject({ accessTokenSub: subA, userinfo: { sub: subA, name: 'Alice Anders', email: alice.email } });
    expect(steps['app-b']).toMatchObject({ accessTokenSub: subB, userinfo: { sub: subB } });
    expect(subA).not.toBe(subB);
    for (const sub of [subA, subB]) expect(sub).not.toBe(userId);
    for (const info of [steps['app-a'].userinfo, steps['app-b'].userinfo]) expect(info.userId).toBeUndefined();

    // Both apps' tokens still serve alice's own accounts, at the facade and the gateway.
    const own = await patSession(p, alice.email, 'READ_ONLY');
    const restOwn = await http('GET', `${p.urls.api}/accounts`, { token: own });
    const gqlOwn = await http('POST', p.urls.gateway, { token: own, body: { query: '{ accounts { id } }' } });
    const ownIds = gqlOwn.body.data.accounts.map((x: { id: string }) => x.id).sort();
    expect(ownIds.length).toBeGreaterThan(0);
    for (const side of [steps['data'].a, steps['data'].b])
      expect(side).toEqual({ rest: 200, restBody: restOwn.body, graphql: 200, graphqlIds: ownIds });
  }, 120_000);

  it('attack: a session record rewritten in Redis to name another user does not turn an app token into theirs', async () => {
    const app2 = await provisionApp(p, { scopes: ['read:accounts'] });
    const { tokens } = await signIn(app2, 'openid,read:accounts');
    const { sid } = JSON.parse(Buffer.from(tokens.access_token.split('.')[1], 'base64url').toString());
    const bobId = (await p.auth.users.findByEmail(DEMO_USERS[1]!.email))!.id;
    const record = JSON.parse((await p.store.get(`session:${sid}`))!);
    expect(record.userId).not.toBe(bobId);
    // Whoever holds Redis: the record keeps its key but names bob (or bob with a key of the attacker's choosing).
    for (const forged of [
      { ...record, userId: bobId },
      { ...record, userId: bobId, userKey: 'A'.repeat(43) },
    ]) {
      await p.store.set(`session:${sid}`, JSON.stringify(forged), 600);
      const res = await http('GET', `${p.urls.api}/accounts`, { token: tokens.access_token });
      expect(res.status).toBe(401);
      const gql = await http('POST', p.urls.gateway, { token: tokens.access_token, body: { query: '{ accounts { id } }' } });
      expect(gql.body.data?.accounts).toBeUndefined();
      expect((await http('GET', `${p.urls.api}/oauth/userinfo`, { token: tokens.access_token })).status).toBe(401);
    }
    // Put back as auth wrote it, the token works again: the refusal was the forgery's.
    await p.store.set(`session:${sid}`, JSON.stringify(record), 600);
    expect((await http('GET', `${p.urls.api}/accounts`, { token: tokens.access_token })).status).toBe(200);
  });
});
