/**
 * The OAuth 2.0 endpoints (served by the auth app, reached through the facade). They answer
 * RFC 6749 errors `{ error, error_description }`, not problem+json, so they are written out here
 * rather than through the REST operations' helper.
 */
const json = (schema: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } });
const oauthError = (description: string) => ({ description, content: json('OAuthError') });
const clientFields = {
  client_id: { type: 'string' },
  client_secret: { type: 'string', description: 'Or HTTP Basic client authentication' },
};

export const oauthSchemas = {
  OAuthError: {
    type: 'object',
    properties: {
      error: { enum: ['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope', 'access_denied', 'temporarily_unavailable'] },
      error_description: { type: 'string' },
    },
    required: ['error'],
  },
  TokenRequest: {
    description: 'Spec §4.1 JSON (`AUTH_CODE`, `REFRESH_TOKEN`) or the RFC 6749 form (`authorization_code`, `refresh_token`).',
    oneOf: [
      {
        type: 'object',
        properties: {
          grant_type: { enum: ['AUTH_CODE', 'authorization_code'] },
          code: { type: 'string' },
          redirect_uri: { type: 'string', format: 'uri' },
          code_verifier: { type: 'string', minLength: 43, maxLength: 128, pattern: '^[A-Za-z0-9._~-]+$' },
          ...clientFields,
        },
        required: ['grant_type', 'code', 'redirect_uri', 'code_verifier'],
      },
      {
        type: 'object',
        properties: { grant_type: { enum: ['REFRESH_TOKEN', 'refresh_token'] }, refresh_token: { type: 'string' }, scope: { type: 'string', description: 'Narrower scope (never wider)' }, ...clientFields },
        required: ['grant_type', 'refresh_token'],
      },
    ],
  },
  TokenResponse: {
    type: 'object',
    properties: {
      access_token: { type: 'string' },
      refresh_token: { type: 'string', description: 'Single use; replaces the previous one' },
      expires_in: { type: 'integer', const: 3600 },
      token_type: { const: 'Bearer' },
      scope: { type: 'string' },
    },
    required: ['access_token', 'refresh_token', 'expires_in', 'token_type', 'scope'],
  },
  RevokeRequest: {
    type: 'object',
    properties: { token: { type: 'string' }, token_type_hint: { enum: ['access_token', 'refresh_token'] }, ...clientFields },
    required: ['token'],
  },
  UserInfo: {
    type: 'object',
    properties: { sub: { type: 'string' }, userId: { type: 'string' }, email: { type: 'string', format: 'email' }, firstName: { type: 'string' }, lastName: { type: 'string' } },
    required: ['userId', 'email', 'firstName', 'lastName'],
  },
};

const authorizeParameters = ['response_type', 'client_id', 'redirect_uri', 'scopes', 'state', 'code_challenge', 'code_challenge_method'].map((name) => ({
  name,
  in: 'query',
  required: name !== 'scopes',
  schema: { type: 'string' },
}));

export const oauthPaths = {
  '/oauth/token': {
    post: {
      summary: 'Exchange an authorization code (PKCE) or a refresh token for tokens',
      security: [],
      requestBody: { required: true, content: { ...json('TokenRequest'), 'application/x-www-form-urlencoded': { schema: { $ref: '#/components/schemas/TokenRequest' } } } },
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
      summary: 'Revoke an access or refresh token (RFC 7009); revoking a refresh token ends the grant',
      security: [],
      requestBody: { required: true, content: { ...json('RevokeRequest'), 'application/x-www-form-urlencoded': { schema: { $ref: '#/components/schemas/RevokeRequest' } } } },
      responses: { 200: { description: 'Revoked (also for unknown tokens)' }, 401: oauthError('invalid_client') },
    },
  },
  '/oauth/authorize': {
    get: {
      summary: 'Authorization endpoint: leads to the login page `{login_url}/<locale>/login` with the same parameters (spec §5.1)',
      security: [],
      parameters: authorizeParameters,
      responses: { 302: { description: 'To the login page' }, 400: { description: 'Error page (unknown client or unregistered redirect URI)' } },
    },
  },
  '/oauth/userinfo': {
    get: {
      summary: 'The signed-in user (spec §2.4)',
      description: 'Scopes: read:accounts',
      security: [{ bearer: ['read:accounts'] }],
      responses: { 200: { description: 'The user', content: json('UserInfo') }, 401: { description: 'Invalid token' }, 403: { description: 'Missing read:accounts' } },
    },
  },
};
