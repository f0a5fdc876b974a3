import { createHash } from 'node:crypto';
import { decodeJwt, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { CLIENT_ASSERTION_ALGS } from '../registry/client-policy';
import type { Client } from '../registry/registry.service';
import { JwksUriFailure } from './client-keys';
import type { OAuthContext } from './context';
import { OAuthError } from './errors';

/** RFC 7523 §2.2 / RFC 7521 §4.2. */
export const JWT_BEARER_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** An assertion may live at most this long from now (FAPI 2.0 asks for short-lived ones). */
const MAX_ASSERTION_LIFETIME_SECONDS = 300;
/** An assertion's `iat` may be at most this far ahead of our clock (a clock a little fast, no more). */
const MAX_ASSERTION_IAT_AHEAD_SECONDS = 60;
const CLOCK_SKEW_SECONDS = 30;

const digest = (value: string) => createHash('sha256').update(value).digest('base64url');

/** The `iss` of an assertion (who claims to send it), read before anything is verified; null when it is not a JWT. */
export function assertionIssuer(assertion: string): string | null {
  if (assertion.length > 8192) return null;
  try {
    const { iss } = decodeJwt(assertion);
    return typeof iss === 'string' && iss.length <= 100 ? iss : null;
  } catch {
    return null;
  }
}

/**
 * private_key_jwt (RFC 7523 §3, OIDC Core §9, FAPI 2.0): the assertion is signed by one of the
 * client's registered keys (ES256, PS256 or EdDSA, as the key allows), `iss` = `sub` = client_id,
 * `aud` is this server's issuer identifier itself, a single string (an endpoint URL or a list
 * could be an assertion made for another server, or for several), `iat` at most 60 s ahead,
 * `exp` at most 5 minutes ahead, and `jti` never seen before for this client (kept in Redis
 * until the assertion expires). Returns why it fails, or null. A jwks_uri auth refuses to read (not a public address,
 * a redirect, too large, not a key set) fails the assertion; one whose server does not answer is
 * 503, not a failure.
 */
export async function clientAssertionProblem(ctx: OAuthContext, client: Client, assertion: string): Promise<string | null> {
  if (client.tokenEndpointAuthMethod !== 'private_key_jwt') return 'this client is not registered for private_key_jwt';
  const keys = ctx.clientKeys.keysOf(client);
  if (!keys) return 'this client has no registered keys';
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(assertion, keys, {
      issuer: client.clientId,
      subject: client.clientId,
      algorithms: [...CLIENT_ASSERTION_ALGS],
      requiredClaims: ['aud', 'exp', 'iat', 'jti'],
      clockTolerance: CLOCK_SKEW_SECONDS,
    }));
  } catch (err) {
    return verificationProblem(client, err);
  }
  const now = Math.floor(Date.now() / 1000);
  const problem = claimsProblem(ctx.settings.issuer, payload, now);
  if (problem) return problem;
  // Single use: the first to count this jti wins; kept until the assertion could no longer be accepted anyway.
  const ttl = Math.max(1, payload.exp! - now + CLOCK_SKEW_SECONDS);
  const { count } = await ctx.store.hit(`oauth-assertion-jti:${digest(`${client.clientId}\n${payload.jti}`)}`, ttl);
  if (count > 1) return 'the client assertion was already used (jti replayed)';
  return null;
}

/** Why the assertion's signature or standard claims failed; a jwks_uri whose server does not answer is 503, not a failure. */
function verificationProblem(client: Client, err: unknown): string {
  if (err instanceof JwksUriFailure && !err.transient) return err.message;
  if (client.jwksUri && !(err instanceof joseErrors.JOSEError))
    throw new OAuthError('temporarily_unavailable', "The client's jwks_uri could not be read; retry shortly", 503, {
      'Retry-After': '5',
    });
  if (err instanceof joseErrors.JWTExpired) return 'the client assertion has expired';
  if (err instanceof joseErrors.JWTClaimValidationFailed) return `the client assertion's ${err.claim} claim is not acceptable`;
  if (err instanceof joseErrors.JWKSNoMatchingKey || err instanceof joseErrors.JWSSignatureVerificationFailed)
    return "the client assertion is not signed by one of the client's registered keys";
  return 'the client assertion is not a valid signed JWT';
}

/** Why a verified assertion's `aud`, `iat`, `exp` or `jti` is not acceptable, or null. */
function claimsProblem(issuer: string, payload: JWTPayload, now: number): string | null {
  if (payload.aud !== issuer)
    return `the client assertion's aud claim must be this server's issuer identifier alone, as a string (${issuer})`;
  if (payload.iat! - now > MAX_ASSERTION_IAT_AHEAD_SECONDS)
    return `the client assertion's iat must not be more than ${MAX_ASSERTION_IAT_AHEAD_SECONDS} seconds ahead of the server's clock`;
  if (payload.exp! - now > MAX_ASSERTION_LIFETIME_SECONDS + CLOCK_SKEW_SECONDS)
    return `the client assertion's exp must be at most ${MAX_ASSERTION_LIFETIME_SECONDS} seconds ahead`;
  const jti = payload.jti;
  if (typeof jti !== 'string' || !jti || jti.length > 200) return "the client assertion's jti must be a string of 1 to 200 characters";
  return null;
}
