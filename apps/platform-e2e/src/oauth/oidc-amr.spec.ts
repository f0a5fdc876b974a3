import { createRemoteJWKSet, jwtVerify } from 'jose';
import { http } from '@trading/testing';
import { codeAt } from '../support/authenticator';
import { exchange, loginPath, pkce, provisionApp, refresh, UserAgent, type ProvisionedApp } from '../support/oauth-helpers';
import { newUser } from '../support/pat-helpers';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const MFA = 'urn:trading-api:acr:mfa';
const PWD = 'urn:trading-api:acr:pwd';

const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)![1]!;

/** OpenID Connect `amr` and `acr`: how the user signed in, in the ID token and userinfo, and `acr_values` asking for a second factor. */
describe('OpenID Connect amr and acr', () => {
  let p: TestPlatform;
  let app: ProvisionedApp;
  let issuer: string;

  const verifyIdToken = (idToken: string) =>
    jwtVerify(idToken, createRemoteJWKSet(new URL(`${p.urls.login}/.well-known/jwks.json`)), {
      issuer,
      audience: app.clientId,
      typ: 'JWT',
      algorithms: ['ES256'],
    });

  /** A browser signed in with the password (and the second step when the user has a factor, given `code`). */
  async function signedIn(user: { email: string; password: string }, code?: string) {
    const ua = new UserAgent(p.urls.login);
    const form = await ua.request('GET', '/en/signin');
    const posted = await ua.request('POST', '/en/signin', { _csrf: csrfOf(form.body), ...user });
    if (code === undefined) expect(posted.location).toBe('/en/developer');
    else {
      expect(posted.location).toBe('/en/signin/second-factor');
      const step = await ua.request('GET', '/en/signin/second-factor');
      expect((await ua.request('POST', '/en/signin/second-factor', { _csrf: csrfOf(step.body), code })).location).toBe('/en/developer');
    }
    return ua;
  }

  /** A user with an authenticator app, set up in `ua`'s session (signed in with the password alone). */
  async function enrol(ua: UserAgent) {
    const csrf = csrfOf((await ua.request('GET', '/en/developer')).body);
    await ua.request('POST', '/en/developer/security/totp', { _csrf: csrf });
    const secret = /data-secret="([A-Z2-7]+)"/.exec((await ua.request('GET', '/en/developer/security/totp')).body)![1]!;
    const now = Math.floor(Date.now() / 1000);
    const confirmed = await ua.request('POST', '/en/developer/security/totp/confirm', { _csrf: csrf, code: await codeAt(secret, now) });
    const recovery = [...confirmed.body.matchAll(/<li><code>([2-9a-z]{5}-[2-9a-z]{5})<\/code><\/li>/g)].map((m) => m[1]!);
    expect(recovery).toHaveLength(10);
    // The first code's step is spent: the next code is the following step's; later ones, recovery codes (each works once).
    return { nextCode: () => codeAt(secret, (Math.floor(now / 30) + 1) * 30), recovery };
  }

  /** The authorization request, from a signed-in browser. */
  const authorize = (ua: UserAgent, extra: Record<string, string> = {}) => {
    const { verifier, challenge } = pkce();
    const path = loginPath({
      clientId: app.clientId,
      redirectUri: app.redirectUri,
      scopes: 'openid,read:accounts',
      state: 'st',
      challenge,
      method: 'S256',
      extra: { nonce: `n-${Math.random()}`, ...extra },
    });
    return { verifier, path, page: ua.request('GET', path) };
  };

  /** An authorization request's path for `client` asking `scopes` (its verifier is not needed: no code is exchanged). */
  const requestPath = (client: ProvisionedApp, scopes: string) =>
    loginPath({
      clientId: client.clientId,
      redirectUri: client.redirectUri,
      scopes,
      state: 'st',
      challenge: pkce().challenge,
      method: 'S256',
    });

  /** Consent on the page, the code exchanged: the verified ID token's payload, userinfo, and the refreshed ID token's. */
  async function tokensFrom(ua: UserAgent, page: { body: string }, verifier: string) {
    const back = new URL((await ua.answer(page, 'approve')).location!);
    const tokens = await exchange(p, app, { code: back.searchParams.get('code')!, verifier, redirectUri: app.redirectUri });
    expect(tokens.status).toBe(200);
    const { payload } = await verifyIdToken(tokens.body.id_token);
    const userinfo = await http('GET', `${p.urls.api}/oauth/userinfo`, { token: tokens.body.access_token });
    const refreshed = await refresh(p.urls.api, app, tokens.body.refresh_token);
    expect(refreshed.status).toBe(200);
    return { payload, userinfo: userinfo.body, refreshed: (await verifyIdToken(refreshed.body.id_token)).payload };
  }

  beforeAll(async () => {
    p = await startTestPlatform();
    app = await provisionApp(p, { scopes: ['read:accounts'] });
    issuer = (await http('GET', `${p.urls.login}/.well-known/openid-configuration`)).body.issuer;
  }, 60_000);
  afterAll(() => p?.stop());

  it('advertises both acr values and the amr and acr claims in discovery', async () => {
    const doc = (await http('GET', `${p.urls.login}/.well-known/openid-configuration`)).body;
    expect(doc.acr_values_supported).toEqual([MFA, PWD]);
    expect(doc.claims_supported).toEqual(expect.arrayContaining(['amr', 'acr']));
  });

  it('says pwd for a password sign-in; acr_values asking for mfa from a user without a factor is unmet_authentication_requirements', async () => {
    const user = await newUser(p);
    const ua = await signedIn(user);
    const plain = authorize(ua);
    const { payload, userinfo, refreshed } = await tokensFrom(ua, await plain.page, plain.verifier);
    expect([payload.amr, payload.acr]).toEqual([['pwd'], PWD]);
    expect([userinfo.amr, userinfo.acr]).toEqual([['pwd'], PWD]);
    expect([refreshed.amr, refreshed.acr]).toEqual([['pwd'], PWD]);

    const asked = await authorize(ua, { acr_values: `${MFA} ${PWD}` }).page;
    expect(asked.status).toBe(303);
    const back = new URL(asked.location!);
    expect(`${back.origin}${back.pathname}`).toBe(app.redirectUri);
    expect(Object.fromEntries(back.searchParams)).toMatchObject({ error: 'unmet_authentication_requirements', state: 'st', iss: issuer });
  });

  it('says pwd and otp (mfa) after the second step; acr_values asking for mfa sends a password-only session to give a code first', async () => {
    const user = await newUser(p);
    const enrolling = await signedIn(user);
    const factor = await enrol(enrolling);

    const withCode = await signedIn(user, await factor.nextCode());
    const first = authorize(withCode, { acr_values: MFA });
    const firstPage = await first.page;
    expect(firstPage.status).toBe(200);
    const { payload, userinfo, refreshed } = await tokensFrom(withCode, firstPage, first.verifier);
    expect([payload.amr, payload.acr]).toEqual([['pwd', 'otp'], MFA]);
    expect([userinfo.amr, userinfo.acr]).toEqual([['pwd', 'otp'], MFA]);
    expect([refreshed.amr, refreshed.acr]).toEqual([['pwd', 'otp'], MFA]);

    // The session that set the factor up signed in with the password alone: without acr_values it says so...
    const plain = authorize(enrolling);
    expect((await tokensFrom(enrolling, await plain.page, plain.verifier)).payload).toMatchObject({ amr: ['pwd'], acr: PWD });
    // ...and asked for mfa, it is sent to give a code before the consent page, then comes back.
    const asked = authorize(enrolling, { acr_values: MFA });
    const detour = await asked.page;
    expect(detour.status).toBe(303);
    expect(detour.location).toBe(`/en/developer/security/confirm?next=${encodeURIComponent(asked.path)}`);
    const confirmPage = await enrolling.request('GET', detour.location!);
    const confirmed = await enrolling.request('POST', '/en/developer/security/confirm', {
      _csrf: csrfOf(confirmPage.body),
      next: asked.path,
      code: factor.recovery[0]!,
    });
    expect([confirmed.status, confirmed.location]).toEqual([303, asked.path]);
    const consent = await enrolling.request('GET', asked.path);
    expect(consent.status).toBe(200);
    expect((await tokensFrom(enrolling, consent, asked.verifier)).payload).toMatchObject({ amr: ['pwd', 'otp'], acr: MFA });
  });

  it('approving an app that asks to trade needs a second factor used in the last ten minutes, from a user who has one', async () => {
    const trader = await provisionApp(p, { scopes: ['read:accounts', 'write:orders'] });
    const user = await newUser(p);
    const enrolling = await signedIn(user);
    const factor = await enrol(enrolling);
    const path = requestPath(trader, 'read:accounts,write:orders');
    // The session that set the factor up has not used it: the code comes first, then the consent page.
    const detour = await enrolling.request('GET', path);
    expect([detour.status, detour.location]).toEqual([303, `/en/developer/security/confirm?next=${encodeURIComponent(path)}`]);
    // Reading only asks for nothing more.
    const reading = requestPath(app, 'read:accounts');
    expect((await enrolling.request('GET', reading)).status).toBe(200);
    const confirmPage = await enrolling.request('GET', detour.location!);
    const confirmed = await enrolling.request('POST', '/en/developer/security/confirm', {
      _csrf: csrfOf(confirmPage.body),
      next: path,
      code: await factor.nextCode(),
    });
    expect([confirmed.status, confirmed.location]).toEqual([303, path]);
    const consent = await enrolling.request('GET', path);
    expect(consent.status).toBe(200);
    expect(new URL((await enrolling.answer(consent, 'approve')).location!).searchParams.get('code')).toBeTruthy();
    // A user without a factor is not asked for one.
    const plain = await signedIn(await newUser(p));
    expect((await plain.request('GET', path)).status).toBe(200);
  });

  it('an app whose policy requires a second factor: a user without one is told unmet_authentication_requirements, one with a factor gives it first', async () => {
    const strict = await provisionApp(p, { scopes: ['read:accounts'], requireSecondFactor: true });
    const path = requestPath(strict, 'read:accounts');
    const without = await (await signedIn(await newUser(p))).request('GET', path);
    expect(without.status).toBe(303);
    expect(new URL(without.location!).searchParams.get('error')).toBe('unmet_authentication_requirements');
    const user = await newUser(p);
    const enrolling = await signedIn(user);
    const factor = await enrol(enrolling);
    // A password-only session of a user with a factor gives it before the consent page.
    const detour = await enrolling.request('GET', path);
    expect(detour.location).toBe(`/en/developer/security/confirm?next=${encodeURIComponent(path)}`);
    // Signed in with the code, the consent page shows and the answer is taken.
    const withCode = await signedIn(user, await factor.nextCode());
    const consent = await withCode.request('GET', path);
    expect(consent.status).toBe(200);
    expect(new URL((await withCode.answer(consent, 'approve')).location!).searchParams.get('code')).toBeTruthy();
  });
});
