import { z } from '@trading/config';
import { named, text } from './kit';

/**
 * The OAuth 2.0 endpoints' bodies (served by the auth app, reached through the facade). They
 * answer RFC 6749 errors `{ error, error_description }`, not problem+json.
 */
const client = {
  client_id: text.optional(),
  client_secret: text.optional().meta({ description: 'Or HTTP Basic client authentication' }),
};

export const oauthError = named(
  'OAuthError',
  z.object({
    error: z.enum([
      'invalid_request',
      'invalid_client',
      'invalid_grant',
      'unauthorized_client',
      'unsupported_grant_type',
      'invalid_scope',
      'invalid_token',
      'insufficient_scope',
      'access_denied',
      'temporarily_unavailable',
    ]),
    error_description: text.optional(),
  }),
);

export const tokenRequest = named(
  'TokenRequest',
  z.union([
    z.object({
      grant_type: z.enum(['AUTH_CODE', 'authorization_code']),
      code: text,
      redirect_uri: z.url(),
      code_verifier: z
        .string()
        .min(43)
        .max(128)
        .regex(/^[A-Za-z0-9._~-]+$/),
      ...client,
    }),
    z.object({
      grant_type: z.enum(['REFRESH_TOKEN', 'refresh_token']),
      refresh_token: text,
      scope: text.optional().meta({ description: 'Narrower scope (never wider)' }),
      ...client,
    }),
  ]),
  'JSON with `AUTH_CODE` / `REFRESH_TOKEN`, or the RFC 6749 form with `authorization_code` / `refresh_token`',
);

export const tokenResponse = named(
  'TokenResponse',
  z.object({
    access_token: text,
    refresh_token: text.meta({ description: 'Single use; replaces the previous one' }),
    expires_in: z.literal(3600),
    token_type: z.literal('Bearer'),
    scope: text,
  }),
);

export const revokeRequest = named(
  'RevokeRequest',
  z.object({ token: text, token_type_hint: z.enum(['access_token', 'refresh_token']).optional(), ...client }),
);

export const userInfo = named(
  'UserInfo',
  z.object({
    sub: text.meta({ description: "An app's token: that app's pairwise subject (as in its ID tokens); a PAT session: the user id" }),
    userId: text.optional().meta({ description: 'PAT sessions only: an app sees the user by its pairwise `sub` alone' }),
    email: z.email(),
    firstName: text,
    lastName: text,
  }),
);
