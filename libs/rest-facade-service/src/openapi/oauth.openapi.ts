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
].map((name) => ({
  name,
  in: 'query',
  required: name !== 'scopes',
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
    get: {
      operationId: 'getUserInfo',
      tags: ['OAuth'],
      summary: 'The signed-in user',
      description: 'Scopes: read:accounts',
      security: [{ oauth2: ['read:accounts'] }, { patSession: [] }],
      responses: {
        200: { description: 'The user', content: json('UserInfo') },
        401: { description: 'Invalid token' },
        403: { description: 'Missing read:accounts' },
      },
    },
  },
};
