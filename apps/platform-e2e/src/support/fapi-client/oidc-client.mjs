// A relying party written with oauth4webapi, as a certified OpenID Connect client behaves:
// prompt=none (both errors), max_age=1 after a wait, prompt=login, userinfo by POST, an ID token
// on refresh, and two apps signing the same person in. Run by oauth-oidc.spec.ts as a child
// process (oauth4webapi is an ES module); the test drives the person's browser and says whether
// it was shown the sign-in form.
import * as oauth from 'oauth4webapi';

const insecure = { [oauth.allowInsecureRequests]: true }; // plain http on localhost only
const ask = (message) =>
  new Promise((resolve) => {
    process.once('message', resolve);
    process.send(message);
  });
const payloadOf = (jwt) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());

async function main() {
  const { issuer, authUrl, api, gateway, apps } = await ask({ type: 'ready' });
  const report = { steps: [] };
  const step = (name, detail = {}) => report.steps.push({ name, ...detail });
  // The test platform listens on ports chosen at start: the document is read where auth listens,
  // and names the issuer it was configured with; the endpoints are where the facade listens.
  const discovered = await oauth.processDiscoveryResponse(new URL(issuer), await fetch(`${authUrl}/.well-known/openid-configuration`));
  const as = {
    ...discovered,
    authorization_endpoint: `${api}/oauth/authorize`,
    token_endpoint: `${api}/oauth/token`,
    userinfo_endpoint: `${api}/oauth/userinfo`,
  };
  step('discovery', { prompts: as.prompt_values_supported });

  const rp = (app) => {
    // A tight clock tolerance, so that the library's own max_age check means something.
    const client = { client_id: app.clientId, [oauth.clockTolerance]: 1 };
    return { app, client, auth: oauth.ClientSecretBasic(app.clientSecret) };
  };
  const [a, b] = apps.map(rp);

  /** One authorization request through the person's browser (`browser`: the signed-in one, or a new one). */
  async function authorize({ app }, extra, browser = 'signed-in') {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const url = new URL(as.authorization_endpoint);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: app.redirectUri,
      scope: 'openid profile read:accounts',
      state,
      nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...extra,
    }).toString();
    const asked = Math.floor(Date.now() / 1000);
    const { callback, signInShown } = await ask({ type: 'authorize', url: url.href, browser });
    return { verifier, state, nonce, callback: new URL(callback), signInShown, asked };
  }

  /** The code exchanged; the ID token validated by the library (nonce, and auth_time against `maxAge`). */
  async function exchange(party, flow, maxAge) {
    const params = oauth.validateAuthResponse(as, party.client, flow.callback, flow.state);
    const res = await oauth.authorizationCodeGrantRequest(
      as,
      party.client,
      party.auth,
      params,
      party.app.redirectUri,
      flow.verifier,
      insecure,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(as, party.client, res, {
      expectedNonce: flow.nonce,
      ...(maxAge !== undefined ? { maxAge } : {}),
    });
    return { tokens, idToken: oauth.getValidatedIdTokenClaims(tokens) };
  }

  /** prompt=none: the answer comes back to the redirect URI, with state and iss (checked by the library). */
  async function promptNone(party, browser) {
    const flow = await authorize(party, { prompt: 'none' }, browser);
    try {
      oauth.validateAuthResponse(as, party.client, flow.callback, flow.state);
      return { error: null };
    } catch (err) {
      if (!(err instanceof oauth.AuthorizationResponseError)) throw err;
      return { error: err.error, signInShown: flow.signInShown, state: flow.callback.searchParams.get('state') === flow.state };
    }
  }

  /** userinfo by POST (the token in the Authorization header), its sub checked by the library against the ID token's. */
  async function userinfoByPost(party, accessToken, sub) {
    const res = await oauth.protectedResourceRequest(
      accessToken,
      'POST',
      new URL(as.userinfo_endpoint),
      new Headers({ 'content-type': 'application/x-www-form-urlencoded' }),
      '',
      insecure,
    );
    return oauth.processUserInfoResponse(as, party.client, sub, res);
  }

  // 1. App A signs the person in (the browser signs in on the way).
  const first = await authorize(a, {});
  const signedIn = await exchange(a, first);
  const infoA = await userinfoByPost(a, signedIn.tokens.access_token, signedIn.idToken.sub);
  step('app-a', {
    signInShown: first.signInShown,
    idTokenSub: signedIn.idToken.sub,
    accessTokenSub: payloadOf(signedIn.tokens.access_token).sub,
    userinfo: infoA,
    authTime: signedIn.idToken.auth_time,
  });

  // 2. prompt=none: a browser signed in to nothing, and the signed-in one (consent is always asked here).
  step('none-signed-out', await promptNone(a, 'new'));
  step('none-signed-in', await promptNone(a, 'signed-in'));

  // 3. max_age=1, a while after the sign-in: a fresh one, and an ID token whose auth_time the library accepts for max_age 1.
  await new Promise((r) => setTimeout(r, 3000));
  const aged = await authorize(a, { max_age: '1' });
  const fresh = await exchange(a, aged, 1);
  step('max-age', { signInShown: aged.signInShown, authTime: fresh.idToken.auth_time, asked: aged.asked });

  // 4. prompt=login: a fresh sign-in though the browser is signed in.
  const again = await authorize(a, { prompt: 'login' });
  const relogged = await exchange(a, again);
  step('prompt-login', { signInShown: again.signInShown, authTime: relogged.idToken.auth_time, asked: again.asked });

  // 5. A refresh of the first grant: a new ID token, same sub, the original auth_time, a new iat.
  await new Promise((r) => setTimeout(r, 1100));
  const refreshed = await oauth.processRefreshTokenResponse(
    as,
    a.client,
    await oauth.refreshTokenGrantRequest(as, a.client, a.auth, signedIn.tokens.refresh_token, insecure),
  );
  const renewed = oauth.getValidatedIdTokenClaims(refreshed);
  step('refresh', {
    idToken: renewed ? { sub: renewed.sub, authTime: renewed.auth_time, iat: renewed.iat, nonce: renewed.nonce ?? null } : null,
    firstIat: signedIn.idToken.iat,
  });

  // 6. App B signs the same person in (already signed in: no form).
  const other = await authorize(b, {});
  const signedInB = await exchange(b, other);
  const infoB = await userinfoByPost(b, signedInB.tokens.access_token, signedInB.idToken.sub);
  step('app-b', {
    idTokenSub: signedInB.idToken.sub,
    accessTokenSub: payloadOf(signedInB.tokens.access_token).sub,
    userinfo: infoB,
  });

  // 7. Both apps' tokens serve the person's own data, at the facade and at the gateway.
  const data = async (token) => {
    const rest = await fetch(`${api}/accounts`, { headers: { authorization: `Bearer ${token}` } });
    const gql = await fetch(gateway, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ accounts { id } }' }),
    });
    const gqlBody = await gql.json();
    return {
      rest: rest.status,
      restBody: await rest.json(),
      graphql: gql.status,
      graphqlIds: gqlBody.data?.accounts?.map((x) => x.id).sort() ?? gqlBody,
    };
  };
  step('data', { a: await data(refreshed.access_token), b: await data(signedInB.tokens.access_token) });
  return report;
}

main().then(
  (report) => process.send({ type: 'done', report }, () => process.exit(0)),
  (err) =>
    process.send(
      { type: 'failed', error: String(err?.stack ?? err), cause: err?.cause ? JSON.stringify(err.cause).slice(0, 500) : undefined },
      () => process.exit(1),
    ),
);
