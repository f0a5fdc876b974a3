import { SCOPE_DESCRIPTIONS } from '@trading/auth';

/**
 * Where the API is served, and the ways a caller authenticates: a vendor app's OAuth token, a
 * user's PAT session, or (the webhook API, where the app speaks for itself) the app's own client credentials.
 */
// {base_url}: each deployment serves the document with its own (docs.ts, FACADE_PUBLIC_URL).
export const servers = [
  {
    url: '{base_url}',
    description: "The API's public base URL",
    variables: { base_url: { default: 'http://localhost:8080/v1', description: 'e.g. https://api.trading.example/v1' } },
  },
];

export const securitySchemes = {
  oauth2: {
    type: 'oauth2',
    description:
      'Vendor apps: authorization code with PKCE (S256 only); access tokens live an hour, refresh tokens rotate on every use. ' +
      'Sender-constrained tokens (DPoP, RFC 9449): send a `DPoP` proof header (a JWT of typ dpop+jwt signed with ES256, EdDSA, PS256 or RS256 by your key, its public key in `jwk`) with the token request, and the tokens are bound to that key (`token_type: DPoP`, `cnf.jkt`); then every call sends `Authorization: DPoP <token>` and a fresh proof with `htm`, `htu` (the public URL of the request, without query), `iat`, a unique `jti` and `ath` (base64url SHA-256 of the token). A bound token sent as Bearer, or with a bad proof, is refused 401 with `WWW-Authenticate: DPoP`.',
    flows: {
      authorizationCode: {
        authorizationUrl: '/v1/oauth/authorize',
        tokenUrl: '/v1/oauth/token',
        refreshUrl: '/v1/oauth/token',
        scopes: SCOPE_DESCRIPTIONS,
      },
    },
  },
  patSession: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'Users\' own scripts: a PAT session. POST /pat/login with your personal access token (`{ "token": "tpat_…" }`) and paste the returned `token` here: a session JWT (15 minutes by default), not the PAT itself. A READ_ONLY token may only read. A login sent with a DPoP proof (htu: the public /v1/pat/login URL) gets a session bound to that key, used as `Authorization: DPoP` with a proof per call, as for OAuth tokens.',
  },
  vendorClient: {
    type: 'http',
    scheme: 'basic',
    description:
      "The webhook API (`/webhooks/*`): the vendor app itself, with its client credentials as at the token endpoint: HTTP Basic, `client_id` as the user name and `client_secret` as the password. An app registered for private_key_jwt sends `client_assertion_type` and `client_assertion` instead, in the JSON body (in the query on GET and DELETE). Each environment's credentials reach that environment's endpoints only.",
  },
};
