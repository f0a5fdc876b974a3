/**
 * The OAuth 2.0 endpoints (served by the auth app, reached through the facade). They answer
 * RFC 6749 errors `{ error, error_description }`, not problem+json, so their operations are
 * written out here rather than through the REST operations' helper; their bodies are the
 * contract's (../contract/oauth.ts).
 */
const json = (schema: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } });
const oauthError = (description: string) => ({ description, content: json('OAuthError') });
const authorizeParameters = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scopes',
  'state',
  'code_challenge',
  'code_challenge_method',
  'nonce',
  'prompt',
  'max_age',
  'request_uri',
].map((name) => ({
  name,
  in: 'query',
  // With request_uri (a pushed request, RFC 9126) only client_id counts.
  required: name === 'client_id',
  schema: { type: 'string' },
}));

export const oauthPaths = {
  '/oauth/token': {
    post: {
      operationId: 'requestToken',
      tags: ['OAuth'],
      summary: 'Exchange an authorization code (PKCE) or a refresh token for tokens',
      security: [],
      requestBody: {
        required: true,
        content: {
          ...json('TokenRequest'),
          'application/x-www-form-urlencoded': { schema: { $ref: '#/components/schemas/TokenRequest' } },
        },
      },
      responses: {
        200: { description: 'Tokens', content: json('TokenResponse') },
        400: oauthError('invalid_request, invalid_grant, unsupported_grant_type, invalid_scope'),
        401: oauthError('invalid_client (with WWW-Authenticate)'),
        429: oauthError(
          "temporarily_unavailable, with Retry-After: this app's budget of token calls is spent (OAUTH_TOKEN_MAX_REQUESTS_PER_CLIENT), or this address failed client authentication too often (a request with the right secret is never refused for that)",
        ),
      },
    },
  },
  '/oauth/revoke': {
    post: {
      operationId: 'revokeToken',
      tags: ['OAuth'],
      summary: 'Revoke an access or refresh token (RFC 7009); revoking a refresh token ends the grant',
      security: [],
      requestBody: {
        required: true,
        content: {
          ...json('RevokeRequest'),
          'application/x-www-form-urlencoded': { schema: { $ref: '#/components/schemas/RevokeRequest' } },
        },
      },
      responses: { 200: { description: 'Revoked (also for unknown tokens)' }, 401: oauthError('invalid_client') },
    },
  },
  '/oauth/par': {
    post: {
      operationId: 'pushAuthorizationRequest',
      tags: ['OAuth'],
      summary: 'Push an authorization request (RFC 9126); then send the user to /oauth/authorize with client_id and request_uri only',
      description:
        'Client-authenticated exactly as the token endpoint (HTTP Basic, client_secret in the body, or private_key_jwt: client_assertion_type and client_assertion). The body carries the authorization request parameters (response_type, redirect_uri, scope or scopes, state, code_challenge, code_challenge_method, nonce), checked as /oauth/authorize checks them. The request_uri works once, for the client that pushed it, for expires_in seconds. Apps that require PAR (requirePushedAuthorizationRequests; PROD by default) are refused a plain authorization request.',
      security: [],
      requestBody: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': { schema: { type: 'object', additionalProperties: { type: 'string' } } },
          'application/json': { schema: { type: 'object', additionalProperties: { type: 'string' } } },
        },
      },
      responses: {
        201: {
          description: 'The pushed request',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['request_uri', 'expires_in'],
                properties: {
                  request_uri: { type: 'string', example: 'urn:ietf:params:oauth:request_uri:6esc_11ACC5bwc014ltc14eY22c' },
                  expires_in: { type: 'integer', example: 60 },
                },
              },
            },
          },
        },
        400: oauthError(
          'invalid_request, invalid_scope, unsupported_response_type, unauthorized_client (the request as /oauth/authorize would refuse it)',
        ),
        401: oauthError('invalid_client (with WWW-Authenticate)'),
        429: oauthError('temporarily_unavailable, with Retry-After (as at the token endpoint)'),
      },
    },
  },
  '/oauth/authorize': {
    get: {
      operationId: 'authorize',
      tags: ['OAuth'],
      summary:
        'Authorization endpoint: leads to the sign-in page `{login_url}/<locale>/login` with the same parameters, where the user signs in and consents',
      security: [],
      parameters: authorizeParameters,
      responses: {
        302: { description: 'To the login page' },
        400: { description: 'Error page (unknown client or unregistered redirect URI)' },
      },
    },
  },
  '/oauth/userinfo': {
    get: userInfoOperation('getUserInfo'),
    post: userInfoOperation('postUserInfo'),
  },
};

/** OpenID Connect Core §5.3: userinfo answers GET and POST alike, the token in the Authorization header. */
function userInfoOperation(operationId: string) {
  return {
    operationId,
    tags: ['OAuth'],
    summary: 'The signed-in user',
    description: 'Scopes: read:accounts',
    security: [{ oauth2: ['read:accounts'] }, { patSession: [] }],
    responses: {
      200: { description: 'The user', content: json('UserInfo') },
      401: { description: 'Invalid token' },
      403: { description: 'Missing read:accounts' },
    },
  };
}
