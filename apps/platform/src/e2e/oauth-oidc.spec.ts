import { createHash } from 'node:crypto';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { http } from '@trading/testing';
import { DEMO_USERS } from '../app';
import { exchange, loginPath, pkce, provisionApp, refresh, UserAgent, type ProvisionedApp } from './oauth-helpers';
import { startTestPlatform, type TestPlatform } from './test-platform';

const alice = { email: DEMO_USERS[0]!.email, password: DEMO_USERS[0]!.password };

/** Issue 27 §4: OpenID Connect Core sign-in (openid, profile, email), ID tokens, discovery, userinfo. */
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
    // A refresh re-issues no ID token (optional in OIDC Core §12.2; not offered here).
    const refreshed = await refresh(p.urls.api, app, first.tokens.refresh_token);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.id_token).toBeUndefined();
  });

  it('answers userinfo per OIDC claims with the pairwise sub, keeping the spec fields with read:accounts', async () => {
    const userId = (await p.auth.users.findByEmail(alice.email))!.id;
    const only = await signIn(app, 'openid');
    const sub = (await verifyIdToken(only.tokens.id_token, app.clientId)).payload.sub;
    const me = await http('GET', `${p.urls.api}/oauth/userinfo`, { token: only.tokens.access_token });
    expect([me.status, me.body]).toEqual([200, { sub }]);

    const email = await signIn(app, 'openid,email');
    expect((await http('GET', `${p.urls.api}/oauth/userinfo`, { token: email.tokens.access_token })).body).toEqual({
      sub,
      email: alice.email,
      email_verified: false,
    });
    const all = await signIn(app, 'openid,profile,read:accounts');
    expect((await http('GET', `${p.urls.api}/oauth/userinfo`, { token: all.tokens.access_token })).body).toEqual({
      sub,
      name: 'Alice Anders',
      given_name: 'Alice',
      family_name: 'Anders',
      userId,
      email: alice.email,
      firstName: 'Alice',
      lastName: 'Anders',
    });
    // Without openid: as before (spec §2.4), sub = the user id.
    const plain = await signIn(app, 'read:accounts');
    expect((await http('GET', `${p.urls.api}/oauth/userinfo`, { token: plain.tokens.access_token })).body.sub).toBe(userId);
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
});
