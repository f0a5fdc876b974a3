import { randomUUID } from 'node:crypto';
import type { OAuthContext } from '../context';
import { oauthErrors } from '../errors';
import type { GrantRecord } from '../grants';
import { apiScopes, scopeString } from '../scopes';

/** Spec §2.3 plus RFC 6749 §5.1's token_type and scope. */
export interface TokenResponse {
  access_token: string;
  /** DPoP when the token is bound to the client's key (RFC 9449 §5). */
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  refresh_token: string;
  scope: string;
  /** OpenID Connect: when the grant includes openid (the code exchange only). */
  id_token?: string;
}

/**
 * A new access token under a grant: a session of its own (kind 'oauth', exactly `scope`),
 * indexed by the grant so that revoking the grant ends it. The grant is checked after the
 * session exists, so a revocation racing this issue never leaves a live session behind.
 */
export async function issueTokens(
  ctx: OAuthContext,
  grant: GrantRecord,
  scope: string[],
  refreshToken: string,
  jkt?: string,
): Promise<TokenResponse> {
  const ttl = ctx.settings.accessTokenTtlSeconds;
  const sid = randomUUID();
  await ctx.sessions.create({
    sid,
    userId: grant.userId,
    kind: 'oauth',
    clientId: grant.clientId,
    grantId: grant.id,
    expiresAt: Math.floor(Date.now() / 1000) + ttl,
  });
  if (!(await ctx.grants.touchIfActive(grant.id))) {
    await ctx.sessions.revoke(sid);
    throw oauthErrors.invalidGrant('The grant has been revoked');
  }
  // OpenID Connect scopes stay on the grant and in the response: the access token carries API scopes only.
  const accessToken = await ctx.signer.sign(
    { sub: grant.userId, sid, kind: 'oauth', clientId: grant.clientId, scope: apiScopes(scope), jkt },
    ttl,
  );
  return {
    access_token: accessToken,
    token_type: jkt ? 'DPoP' : 'Bearer',
    expires_in: ttl,
    refresh_token: refreshToken,
    scope: scopeString(scope),
  };
}
