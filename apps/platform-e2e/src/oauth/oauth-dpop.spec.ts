import { decodeJwt } from 'jose';
import { http } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { dpopCall, DpopKey, freePort } from '../support/dpop-helpers';
import { authorizationCode, extraAuth, provisionApp, type ProvisionedApp } from '../support/oauth-helpers';
import { extraFacade } from '../support/pat-helpers';
import { inDays, startTestPlatform, type TestPlatform } from '../support/test-platform';

const alice = { email: DEMO_USERS[0]!.email, password: DEMO_USERS[0]!.password };

/**
 * DPoP (RFC 9449) end to end over HTTP with real proofs: an authorization code + PKCE
 * exchange binds the tokens to the client's key (token_type DPoP, cnf.jkt), the REST facade and
 * the GraphQL gateway accept them only with a fresh proof of that key for that very request, the
 * refresh token stays bound, nonces work across auth instances, PAT sessions may opt in.
 */
describe('DPoP: sender-constrained tokens', () => {
  let p: TestPlatform;
  let app: ProvisionedApp;
  let api: string;
  let graphql: string;
  const key = (async () => DpopKey.generate())();

  beforeAll(async () => {
    const [facadePort, gatewayPort] = [await freePort(), await freePort()];
    p = await startTestPlatform({ FACADE_PORT: String(facadePort), GATEWAY_PORT: String(gatewayPort) });
    // The public URLs, as the platform was told them (never from a Host header).
    api = `http://localhost:${facadePort}/v1`;
    graphql = `http://localhost:${gatewayPort}/graphql`;
    app = await provisionApp(p, { scopes: ['read:accounts', 'read:orders'] });
  }, 60_000);
  afterAll(() => p?.stop());

  const tokenRequest = (params: Record<string, string>, proof?: string, url = `${api}/oauth/token`) =>
    http('POST', url, {
      body: { client_id: app.clientId, client_secret: app.clientSecret, ...params },
      headers: proof ? { dpop: proof } : {},
    });

  /** Sign-in, consent, and the code exchanged with a proof of `dpop`. */
  async function dpopTokens(dpop: DpopKey, scopes = 'read:accounts,read:orders') {
    const c = await authorizationCode(p, app, alice, scopes);
    const res = await tokenRequest(
      { grant_type: 'authorization_code', code: c.code, redirect_uri: c.redirectUri, code_verifier: c.verifier },
      await dpop.proof('POST', `${api}/oauth/token`),
    );
    expect(res.status).toBe(200);
    return res.body as { access_token: string; refresh_token: string; token_type: string; scope: string };
  }

  it('advertises the algorithms it verifies in the RFC 8414 metadata', async () => {
    const meta = await http('GET', `${p.urls.login}/.well-known/oauth-authorization-server`);
    expect(meta.body.dpop_signing_alg_values_supported).toEqual(['ES256', 'EdDSA', 'PS256']);
    expect(meta.body.token_endpoint).toBe(`${api}/oauth/token`);
  });

  it('binds the tokens of an authorization code + PKCE exchange to the key; REST and GraphQL accept them with a proof', async () => {
    const dpop = await key;
    const tokens = await dpopTokens(dpop);
    expect(tokens.token_type).toBe('DPoP');
    expect(decodeJwt(tokens.access_token)['cnf']).toEqual({ jkt: dpop.jkt });

    const url = `${api}/accounts`;
    const rest = await dpopCall('GET', url, tokens.access_token, await dpop.proof('GET', url, { accessToken: tokens.access_token }));
    expect(rest.status).toBe(200);
    expect(JSON.stringify(rest.body)).toContain(DEMO_ACCOUNTS[0]!.id);

    const gql = await dpopCall(
      'POST',
      graphql,
      tokens.access_token,
      await dpop.proof('POST', graphql, { accessToken: tokens.access_token }),
      {
        query: '{ accounts { id } }',
      },
    );
    expect(gql.status).toBe(200);
    expect(gql.body.data.accounts.map((a: { id: string }) => a.id)).toContain(DEMO_ACCOUNTS[0]!.id);

    // The query string is not part of htu (RFC 9449 §4.3).
    const paged = `${api}/accounts/${DEMO_ACCOUNTS[1]!.id}/positions`;
    const withQuery = await dpopCall(
      'GET',
      `${paged}?limit=1`,
      tokens.access_token,
      await dpop.proof('GET', paged, { accessToken: tokens.access_token }),
    );
    expect(withQuery.status).toBe(200);
  });

  it('refuses a DPoP-bound token sent as a bearer token (REST and GraphQL): 401 with a DPoP challenge', async () => {
    const dpop = await key;
    const { access_token: token } = await dpopTokens(dpop);
    const rest = await http('GET', `${api}/accounts`, { token });
    expect(rest.status).toBe(401);
    expect(rest.headers.get('www-authenticate')).toMatch(/^DPoP /);
    expect(rest.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(rest.headers.get('www-authenticate')).toContain('algs="ES256');
    const gql = await http('POST', graphql, { token, body: { query: '{ accounts { id } }' } });
    expect(gql.status).toBe(401);
    expect(gql.headers.get('www-authenticate')).toContain('DPoP ');
    expect(gql.headers.get('www-authenticate')).toContain('error="invalid_token"');
    // Bearer tokens keep working as before.
  });

  it('refuses a proof replayed at a second facade instance (one jti replay cache in Redis)', async () => {
    const dpop = await key;
    const { access_token: token } = await dpopTokens(dpop);
    const second = await extraFacade(p, [], api);
    try {
      const url = `${api}/accounts`;
      const proof = await dpop.proof('GET', url, { accessToken: token });
      expect((await dpopCall('GET', url, token, proof)).status).toBe(200);
      const replayed = await dpopCall('GET', `${second.api}/accounts`, token, proof);
      expect(replayed.status).toBe(401);
      expect(replayed.headers.get('www-authenticate')).toContain('error="invalid_dpop_proof"');
      expect(replayed.body.detail).toMatch(/used before/);
      // The second instance accepts a fresh proof of the same request: only the replay was refused.
      expect((await dpopCall('GET', `${second.api}/accounts`, token, await dpop.proof('GET', url, { accessToken: token }))).status).toBe(
        200,
      );
    } finally {
      await second.close();
    }
  });

  it('refuses proofs for another URL or method, stale ones, ones by another key, and ones without ath', async () => {
    const dpop = await key;
    const other = await DpopKey.generate();
    const { access_token: token } = await dpopTokens(dpop);
    const url = `${api}/accounts`;
    const refused = async (proof: string, why: RegExp, at = url) => {
      const res = await dpopCall('GET', at, token, proof);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('error="invalid_dpop_proof"');
      expect(res.body.detail).toMatch(why);
    };
    await refused(await dpop.proof('GET', `${api}/accounts/${DEMO_ACCOUNTS[0]!.id}/positions`, { accessToken: token }), /htu/);
    await refused(await dpop.proof('GET', `http://evil.example/v1/accounts`, { accessToken: token }), /htu/);
    await refused(await dpop.proof('POST', url, { accessToken: token }), /htm/);
    await refused(await dpop.proof('GET', url, { accessToken: token, iat: Math.floor(Date.now() / 1000) - 300 }), /iat/);
    await refused(await dpop.proof('GET', url, { accessToken: token, iat: Math.floor(Date.now() / 1000) + 300 }), /iat/);
    await refused(await dpop.proof('GET', url, { accessToken: token, signedBy: other }), /another key/);
    await refused(await dpop.proof('GET', url, { accessToken: token, omitAth: true }), /ath/);
    await refused(await dpop.proof('GET', url, { accessToken: `${token}x` }), /ath/);
    const missing = await dpopCall('GET', url, token, undefined);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toContain('error="invalid_dpop_proof"');
    // The same at the gateway: a proof for the REST URL is no proof for GraphQL.
    const gql = await dpopCall('POST', graphql, token, await dpop.proof('POST', url, { accessToken: token }), {
      query: '{ accounts { id } }',
    });
    expect(gql.status).toBe(401);
    expect(gql.headers.get('www-authenticate')).toContain('error="invalid_dpop_proof"');
  });

  it("a DPoP grant refreshes only with a proof, of any key the client holds (RFC 9449 §5: a confidential client's refresh token is bound to no key); the new access token is bound to that key", async () => {
    const dpop = await key;
    const rotated = await DpopKey.generate();
    const tokens = await dpopTokens(dpop);
    const refreshParams = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token };

    const without = await tokenRequest(refreshParams);
    expect(without.status).toBe(400);
    expect(without.body.error).toBe('invalid_dpop_proof');
    // Nothing was spent: the client, having rotated its DPoP key, refreshes with a proof of the new one.
    const ok = await tokenRequest(refreshParams, await rotated.proof('POST', `${api}/oauth/token`));
    expect(ok.status).toBe(200);
    expect(ok.body.token_type).toBe('DPoP');
    expect(decodeJwt(ok.body.access_token)['cnf']).toEqual({ jkt: rotated.jkt });
    const accounts = `${api}/accounts`;
    const call = async (k: DpopKey) =>
      (await dpopCall('GET', accounts, ok.body.access_token, await k.proof('GET', accounts, { accessToken: ok.body.access_token }))).status;
    expect(await call(rotated)).toBe(200);
    expect(await call(dpop)).toBe(401);
    // A proof for another endpoint is no proof for the token endpoint.
    const wrongUrl = await tokenRequest(
      { grant_type: 'refresh_token', refresh_token: ok.body.refresh_token },
      await dpop.proof('POST', `${api}/oauth/revoke`),
    );
    expect(wrongUrl.status).toBe(400);
    expect(wrongUrl.body.error).toBe('invalid_dpop_proof');
  });

  it('an ingress that sends {base_url}/oauth/* straight to auth: auth’s public listener answers the API’s spelling as the facade does (authorize, code exchange and refresh with proofs naming {base_url}, userinfo, revocation)', async () => {
    const dpop = await key;
    // What an ingress forwards: the path as the vendor sent it (/v1/oauth/...), to auth's public listener.
    const direct = `${p.urls.login}${new URL(api).pathname}/oauth`;
    // The authorize redirect leads where the facade's does: the issuer's login page, the query kept.
    const query = `?client_id=${app.clientId}&ui_locales=de`;
    const [viaIngress, viaFacade] = await Promise.all(
      [`${direct}/authorize${query}`, `${api}/oauth/authorize${query}`].map((url) => fetch(url, { redirect: 'manual' })),
    );
    expect([viaIngress.status, viaFacade.status]).toEqual([302, 302]);
    const location = new URL(viaIngress.headers.get('location')!);
    expect(`${location.pathname}${location.search}`).toBe(`/de/login${query}`);
    expect(viaIngress.headers.get('location')).toBe(viaFacade.headers.get('location'));

    const c = await authorizationCode(p, app, alice, 'read:accounts');
    // Proofs name the public URL the vendor called ({base_url}/oauth/token), not the address the ingress chose.
    const exchanged = await tokenRequest(
      { grant_type: 'authorization_code', code: c.code, redirect_uri: c.redirectUri, code_verifier: c.verifier },
      await dpop.proof('POST', `${api}/oauth/token`),
      `${direct}/token`,
    );
    expect([exchanged.status, exchanged.body.token_type]).toEqual([200, 'DPoP']);
    const refreshParams = { grant_type: 'refresh_token', refresh_token: exchanged.body.refresh_token };
    // A proof for another address is refused there as it is through the facade.
    const wrongUrl = await tokenRequest(refreshParams, await dpop.proof('POST', `${direct}/revoke`), `${direct}/token`);
    expect([wrongUrl.status, wrongUrl.body.error]).toEqual([400, 'invalid_dpop_proof']);
    const refreshed = await tokenRequest(refreshParams, await dpop.proof('POST', `${api}/oauth/token`), `${direct}/token`);
    expect(refreshed.status).toBe(200);
    expect(decodeJwt(refreshed.body.access_token)['cnf']).toEqual({ jkt: dpop.jkt });
    // One grant store behind both spellings: a client's retry through the facade, within the grace
    // for lost answers, is answered with the very successor the ingress's address handed out.
    const retried = await tokenRequest(refreshParams, await dpop.proof('POST', `${api}/oauth/token`));
    expect([retried.status, retried.body.refresh_token]).toEqual([200, refreshed.body.refresh_token]);

    const accessToken = refreshed.body.access_token as string;
    const userinfo = await dpopCall(
      'GET',
      `${direct}/userinfo`,
      accessToken,
      await dpop.proof('GET', `${api}/oauth/userinfo`, { accessToken }),
    );
    expect(userinfo.status).toBe(200);
    const revoked = await http('POST', `${direct}/revoke`, {
      body: { token: refreshed.body.refresh_token, client_id: app.clientId, client_secret: app.clientSecret },
    });
    expect(revoked.status).toBe(200);
    const afterRevoke = await tokenRequest(
      { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token },
      await dpop.proof('POST', `${api}/oauth/token`),
      `${direct}/token`,
    );
    expect([afterRevoke.status, afterRevoke.body.error]).toEqual([400, 'invalid_grant']);
  });

  it('without a proof, the same app still gets bearer tokens, which work as before', async () => {
    const c = await authorizationCode(p, app, alice, 'read:accounts');
    const res = await tokenRequest({
      grant_type: 'authorization_code',
      code: c.code,
      redirect_uri: c.redirectUri,
      code_verifier: c.verifier,
    });
    expect(res.body.token_type).toBe('Bearer');
    expect(decodeJwt(res.body.access_token)['cnf']).toBeUndefined();
    expect((await http('GET', `${api}/accounts`, { token: res.body.access_token })).status).toBe(200);
    // An unbound token under the DPoP scheme is refused (nothing to check the proof against).
    const dpop = await key;
    const asDpop = await dpopCall('GET', `${api}/accounts`, res.body.access_token, await dpop.proof('GET', `${api}/accounts`));
    expect(asDpop.status).toBe(401);
  });

  it('enforces dpop_bound_access_tokens for an app registered with it: a token request without a proof is refused', async () => {
    const strict = await provisionApp(p, { dpopBoundAccessTokens: true });
    const c = await authorizationCode(p, strict, alice, 'read:accounts');
    const params = {
      grant_type: 'authorization_code',
      code: c.code,
      redirect_uri: c.redirectUri,
      code_verifier: c.verifier,
      client_id: strict.clientId,
      client_secret: strict.clientSecret,
    };
    const bare = await http('POST', `${api}/oauth/token`, { body: params });
    expect(bare.status).toBe(400);
    expect(bare.body).toMatchObject({ error: 'invalid_dpop_proof', error_description: expect.stringMatching(/must use DPoP/) });
    const dpop = await key;
    const bound = await http('POST', `${api}/oauth/token`, {
      body: params,
      headers: { dpop: await dpop.proof('POST', `${api}/oauth/token`) },
    });
    expect(bound.status).toBe(200);
    expect(bound.body.token_type).toBe('DPoP');
  });

  it('server nonces: use_dpop_nonce with a DPoP-Nonce, then success, at another auth instance too (stateless)', async () => {
    const settings = { DPOP_NONCE_REQUIRED: true, AUTH_API_URL: api };
    const [a, b] = [await extraAuth(p, settings), await extraAuth(p, settings)];
    try {
      const dpop = await key;
      const c = await authorizationCode(p, app, alice, 'read:accounts');
      const params = { grant_type: 'authorization_code', code: c.code, redirect_uri: c.redirectUri, code_verifier: c.verifier };
      // Both instances claim the platform's public URL, as instances behind one facade do.
      const first = await tokenRequest(params, await dpop.proof('POST', `${api}/oauth/token`), `${a.url}/oauth/token`);
      expect(first.status).toBe(400);
      expect(first.body.error).toBe('use_dpop_nonce');
      const nonce = first.headers.get('dpop-nonce');
      expect(nonce).toMatch(/^[A-Za-z0-9_-]{32}$/);
      const stale = await tokenRequest(
        params,
        await dpop.proof('POST', `${api}/oauth/token`, { nonce: 'x'.repeat(32) }),
        `${b.url}/oauth/token`,
      );
      expect(stale.body.error).toBe('use_dpop_nonce');
      const second = await tokenRequest(params, await dpop.proof('POST', `${api}/oauth/token`, { nonce: nonce! }), `${b.url}/oauth/token`);
      expect(second.status).toBe(200);
      expect(second.body.token_type).toBe('DPoP');
      expect(second.headers.get('dpop-nonce')).toBe(nonce);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('PAT sessions may opt in: POST /pat/login with a proof issues a bound session token, used with proofs', async () => {
    const dpop = await key;
    const user = (await p.auth.users.findByEmail(alice.email))!;
    const { token: pat } = await p.auth.pats.create({ userId: user.id, name: 'dpop', access: 'READ_ONLY', expires: inDays(7) });
    const badProof = await http('POST', `${api}/pat/login`, {
      body: { token: pat },
      headers: { dpop: await dpop.proof('POST', `${api}/pat/logout`) },
    });
    expect(badProof.status).toBe(400);
    expect(badProof.body.field).toBe('header.DPoP');
    const login = await http('POST', `${api}/pat/login`, {
      body: { token: pat },
      headers: { dpop: await dpop.proof('POST', `${api}/pat/login`) },
    });
    expect(login.status).toBe(200);
    const session = login.body.token as string;
    expect(decodeJwt(session)['cnf']).toEqual({ jkt: dpop.jkt });

    const url = `${api}/accounts`;
    expect((await dpopCall('GET', url, session, await dpop.proof('GET', url, { accessToken: session }))).status).toBe(200);
    expect((await http('GET', url, { token: session })).status).toBe(401);
    const activity = `${api}/pat/login-activity`;
    expect((await dpopCall('GET', activity, session, await dpop.proof('GET', activity, { accessToken: session }))).status).toBe(200);
    expect((await dpopCall('GET', activity, session, await dpop.proof('GET', url, { accessToken: session }))).status).toBe(401);

    // The order-event stream checks the proof when it opens and keeps the stream past its access re-checks.
    const events = `${api}/oms/${DEMO_ACCOUNTS[0]!.id}/events`;
    const abort = new AbortController();
    const res = await fetch(events, {
      headers: {
        authorization: `DPoP ${session}`,
        dpop: await dpop.proof('GET', events, { accessToken: session }),
        accept: 'text/event-stream',
      },
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    const until = Date.now() + 2500;
    while (Date.now() < until) {
      let timer: NodeJS.Timeout | undefined;
      const chunk = await Promise.race([
        reader.read(),
        new Promise<null>((r) => (timer = setTimeout(() => r(null), until - Date.now()))),
      ]).finally(() => clearTimeout(timer));
      if (!chunk || chunk.done) break;
      text += new TextDecoder().decode(chunk.value);
    }
    abort.abort();
    expect(text).not.toContain('event: end');
  });
});
