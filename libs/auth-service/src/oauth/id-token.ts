import { createHash, createHmac } from 'node:crypto';
import type { Client } from '../registry/registry.service';
import type { User } from '../users/user.entity';
import type { OAuthContext } from './context';

/** The authentication context classes (`acr`) this server names: a password and a second factor, or a password alone. */
export const ACR_MFA = 'urn:trading-api:acr:mfa';
const ACR_PWD = 'urn:trading-api:acr:pwd';
export const ACR_VALUES = [ACR_MFA, ACR_PWD] as const;

/**
 * `amr` and `acr` of a sign-in (RFC 8176 method names): `otp` (an authenticator app) or `hwk` (a
 * passkey, which holds its key and checks who holds it) among the methods makes it `mfa`.
 */
export const authenticationClaims = (amr: readonly string[] | undefined) => {
  const methods = amr?.length ? [...amr] : ['pwd'];
  return { amr: methods, acr: methods.includes('otp') || methods.includes('hwk') ? ACR_MFA : ACR_PWD };
};

/** An ID token proves a sign-in that just happened: short-lived (the access token carries on for an hour). */
const ID_TOKEN_TTL_SECONDS = 300;

/**
 * OpenID Connect Core §8.1, pairwise: the `sub` an app sees is HMAC-SHA256 of the user id under
 * the app's own secret (kept in PostgreSQL, never shown): stable for that app across its
 * environments and across key rotations, different for every app, so two apps cannot match
 * their users by it.
 */
export const pairwiseSubject = (client: Pick<Client, 'subjectSecret'>, userId: string) =>
  createHmac('sha256', client.subjectSecret).update(userId).digest('base64url');

/** OIDC Core §3.1.3.6: base64url of the left half of SHA-256 of the access token (ES256 → SHA-256). */
const accessTokenHash = (accessToken: string) =>
  createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url');

/** The claims the granted scopes release (Core §5.4): `email` → email, email_verified; `profile` → name, given_name, family_name. */
export function scopedClaims(user: Pick<User, 'email' | 'firstName' | 'lastName'>, scope: readonly string[]): Record<string, unknown> {
  return {
    ...(scope.includes('email')
      ? // Addresses come from account opening, entered by the service team; no mail round trip has verified them.
        { email: user.email, email_verified: false }
      : {}),
    ...(scope.includes('profile')
      ? { name: `${user.firstName} ${user.lastName}`.trim(), given_name: user.firstName, family_name: user.lastName }
      : {}),
  };
}

/**
 * The id_token of a token response whose grant includes `openid`: iss, sub (pairwise), aud =
 * client_id, exp, iat, auth_time, nonce (when the request had one), amr and acr, at_hash of the access token
 * it comes with, and the scoped claims; ES256 with the access-token signing key (same JWKS), typ JWT.
 */
export async function issueIdToken(
  ctx: OAuthContext,
  client: Client,
  grant: { userId: string; scope: readonly string[] },
  accessToken: string,
  session: { nonce?: string; authTime?: number; amr?: string[] },
): Promise<string> {
  const user = await ctx.users.findById(grant.userId);
  if (!user) throw new Error('the user of a grant no longer exists');
  return ctx.signer.signIdToken(
    {
      ...(session.authTime ? { auth_time: session.authTime } : {}),
      ...(session.nonce ? { nonce: session.nonce } : {}),
      ...authenticationClaims(session.amr),
      at_hash: accessTokenHash(accessToken),
      ...scopedClaims(user, grant.scope),
    },
    pairwiseSubject(client, user.id),
    client.clientId,
    ID_TOKEN_TTL_SECONDS,
  );
}
