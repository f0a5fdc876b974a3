// A vendor's backend at the FAPI 2.0 level, written with oauth4webapi (a standards OAuth 2.0 /
// OpenID Connect client) exactly as its documentation shows: discovery, a pushed authorization
// request (RFC 9126) authenticated with private_key_jwt (RFC 7523) and carrying a DPoP proof (its
// code bound to that key, RFC 9449 §10), the code exchanged with a proof of the same key, the id_token validated, API calls with proofs, a refresh with a proof,
// revocation. Run by fapi2-client.spec.ts as a child process (oauth4webapi is an ES module); the
// test drives the person's browser part (sign-in and consent) and reads what this reports.
import * as oauth from 'oauth4webapi';
import { createRemoteJWKSet, jwtVerify } from 'jose';

const insecure = { [oauth.allowInsecureRequests]: true }; // plain http on localhost only
const ask = (message) =>
  new Promise((resolve) => {
    process.once('message', resolve);
    process.send(message);
  });

/** A request that may be answered `use_dpop_nonce` once: oauth4webapi keeps the nonce; the retry carries it. */
async function withNonceRetry(request) {
  try {
    return await request();
  } catch (err) {
    if (!oauth.isDPoPNonceError(err)) throw err;
    return request();
  }
}

async function main() {
  const { issuer, api, gateway } = await ask({ type: 'ready' });

  // The client's signing key (its public half is what the app registers) and its DPoP key.
  const clientKeys = await oauth.generateKeyPair('ES256', { extractable: true });
  const publicJwk = await crypto.subtle.exportKey('jwk', clientKeys.publicKey);
  const { clientId, redirectUri, user } = await ask({ type: 'register', jwk: { ...publicJwk, kid: 'vendor-1', alg: 'ES256', use: 'sig' } });

  const report = { steps: [] };
  const step = (name, detail = {}) => report.steps.push({ name, ...detail });

  const issuerUrl = new URL(issuer);
  const as = await oauth.processDiscoveryResponse(issuerUrl, await oauth.discoveryRequest(issuerUrl, { algorithm: 'oidc', ...insecure }));
  step('discovery', {
    par: as.pushed_authorization_request_endpoint,
    requirePar: as.require_pushed_authorization_requests ?? false,
    dpopAlgs: as.dpop_signing_alg_values_supported,
    authMethods: as.token_endpoint_auth_methods_supported,
    iss: as.authorization_response_iss_parameter_supported,
  });

  const client = { client_id: clientId };
  const clientAuth = oauth.PrivateKeyJwt({ key: clientKeys.privateKey, kid: 'vendor-1' });
  const dpop = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));

  // PAR: the whole authorization request goes to the server first; the browser only carries request_uri.
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  // With a DPoP proof (RFC 9449 §10.1): the code is bound to this key, as FAPI 2.0 asks.
  const parResponse = await oauth.pushedAuthorizationRequest(
    as,
    client,
    clientAuth,
    {
      response_type: 'code',
      redirect_uri: redirectUri,
      scope: 'openid profile email read:accounts',
      state,
      nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    },
    { DPoP: dpop, ...insecure },
  );
  const par = await oauth.processPushedAuthorizationResponse(as, client, parResponse);
  step('par', { requestUri: par.request_uri, expiresIn: par.expires_in });

  const authorize = new URL(as.authorization_endpoint);
  authorize.searchParams.set('client_id', clientId);
  authorize.searchParams.set('request_uri', par.request_uri);
  const { callback } = await ask({ type: 'authorize', url: authorize.href, requestUri: par.request_uri, user });

  // The callback: state and iss checked (RFC 9207), then the code exchanged with a proof.
  const params = oauth.validateAuthResponse(as, client, new URL(callback), state);
  const tokens = await withNonceRetry(async () =>
    oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, redirectUri, verifier, { DPoP: dpop, ...insecure }),
      { expectedNonce: nonce, requireIdToken: true },
    ),
  );
  const claims = oauth.getValidatedIdTokenClaims(tokens);
  // The library checked iss, aud, exp, iat, nonce and at_hash; the signature is checked against the JWKS too.
  const { protectedHeader } = await jwtVerify(tokens.id_token, createRemoteJWKSet(new URL(as.jwks_uri)), {
    issuer: as.issuer,
    audience: clientId,
  });
  step('token', {
    tokenType: tokens.token_type,
    scope: tokens.scope,
    hasRefresh: typeof tokens.refresh_token === 'string',
    idToken: {
      sub: claims.sub,
      nonce: claims.nonce === nonce,
      email: claims.email,
      alg: protectedHeader.alg,
      authTime: typeof claims.auth_time,
    },
  });

  const call = async (accessToken, url) => {
    try {
      const res = await withNonceRetry(() =>
        oauth.protectedResourceRequest(accessToken, 'GET', new URL(url), undefined, undefined, { DPoP: dpop, ...insecure }),
      );
      return { status: res.status, body: await res.json().catch(() => null) };
    } catch (err) {
      // A refusal with a challenge (401): the library throws; its status and challenge are what matter.
      if (!(err instanceof oauth.WWWAuthenticateChallengeError)) throw err;
      return { status: err.status, challenge: err.cause };
    }
  };
  const accounts = await call(tokens.access_token, `${api}/accounts`);
  step('api', { status: accounts.status, accounts: Array.isArray(accounts.body?.accounts) ? accounts.body.accounts.length : null });
  const gql = await withNonceRetry(() =>
    oauth.protectedResourceRequest(
      tokens.access_token,
      'POST',
      new URL(gateway),
      new Headers({ 'content-type': 'application/json' }),
      JSON.stringify({ query: '{ accounts { id } }' }),
      { DPoP: dpop, ...insecure },
    ),
  );
  step('graphql', { status: gql.status, accounts: (await gql.json()).data?.accounts?.length ?? null });

  // The same token as a plain bearer token: a thief without the key.
  const stolen = await fetch(`${api}/accounts`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  step('bearer', { status: stolen.status, challenge: stolen.headers.get('www-authenticate') });

  // Refresh, with a proof of the same key.
  const refreshed = await withNonceRetry(async () =>
    oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token, { DPoP: dpop, ...insecure }),
    ),
  );
  const afterRefresh = await call(refreshed.access_token, `${api}/accounts`);
  step('refresh', { tokenType: refreshed.token_type, rotated: refreshed.refresh_token !== tokens.refresh_token, api: afterRefresh.status });

  // Revocation ends the grant: its access tokens stop working at once.
  await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, clientAuth, refreshed.refresh_token, insecure));
  const afterRevoke = await call(refreshed.access_token, `${api}/accounts`);
  step('revoke', { api: afterRevoke.status, challenge: afterRevoke.challenge });

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
