// A vendor's backend built to the seed spec, written with oauth4webapi exactly as
// docs/vendor-quickstart.md shows: discovery, a plain authorization request with PKCE, the code
// exchanged with client_secret_basic, Bearer calls to the API, a refresh. Run by
// oauth-profiles.spec.ts as a child process (oauth4webapi is an ES module) against a PROD app
// registered with the default profile; the test drives the person's browser part.
import * as oauth from 'oauth4webapi';

const insecure = { [oauth.allowInsecureRequests]: true }; // plain http on localhost only
const ask = (message) =>
  new Promise((resolve) => {
    process.once('message', resolve);
    process.send(message);
  });

async function main() {
  const { issuer, authUrl, api, clientId, clientSecret, redirectUri } = await ask({ type: 'ready' });
  const report = { steps: [] };
  const step = (name, detail = {}) => report.steps.push({ name, ...detail });

  // The PROD auth of this test is a second deployment beside the platform: its metadata is read
  // from where it listens, and names the issuer it was configured with.
  const discovered = await oauth.processDiscoveryResponse(
    new URL(issuer),
    await fetch(`${authUrl}/.well-known/oauth-authorization-server`),
  );
  const as = { ...discovered, authorization_endpoint: `${authUrl}/oauth/authorize`, token_endpoint: `${authUrl}/oauth/token` };
  const client = { client_id: clientId };
  const auth = oauth.ClientSecretBasic(clientSecret);

  // 1. Send the user here (keep verifier and state in their session).
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const login = new URL(as.authorization_endpoint);
  login.search = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: redirectUri,
    scope: 'read:accounts',
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString();
  const { callback } = await ask({ type: 'authorize', url: login.href });

  // 2. On the callback:
  const params = oauth.validateAuthResponse(as, client, new URL(callback), state);
  const res = await oauth.authorizationCodeGrantRequest(as, client, auth, params, redirectUri, verifier, insecure);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, res);
  step('token', { tokenType: tokens.token_type, hasRefresh: typeof tokens.refresh_token === 'string' });

  const accounts = await fetch(`${api}/accounts`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  step('api', { status: accounts.status });

  const refreshed = await oauth.processRefreshTokenResponse(
    as,
    client,
    await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token, insecure),
  );
  const after = await fetch(`${api}/accounts`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
  step('refresh', { tokenType: refreshed.token_type, api: after.status });
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
