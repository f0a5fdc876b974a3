import { randomUUID } from 'node:crypto';
import { newUserCommitmentKey, userCommitment, type SessionRecord } from '@trading/auth';
import type { Client } from '../../registry/registry.service';
import type { OAuthContext } from '../context';
import { oauthErrors } from '../errors';
import type { StoredGrant } from '../grants';
import { pairwiseSubject } from '../id-token';
import { apiScopes, scopeString } from '../scopes';
import { sessionAmrKey } from '../token-store';

/** access_token, refresh_token and expires_in, plus RFC 6749 §5.1's token_type and scope. */
export interface TokenResponse {
  access_token: string;
  /** DPoP when the token is bound to the client's key (RFC 9449 §5). */
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  refresh_token: string;
  scope: string;
  /** OpenID Connect: when the grant includes openid (the code exchange, and refreshes that keep openid). */
  id_token?: string;
}

/** A new access token under a grant, signed but not yet live: its session still has to be written. */
export interface PreparedTokens {
  session: SessionRecord;
  answer: TokenResponse;
}

/**
 * A new access token under a grant: a session of its own (kind 'oauth', exactly `scope`),
 * indexed by the grant so that revoking the grant ends it. The grant is checked after the
 * session exists, so a revocation racing this issue never leaves a live session behind.
 */
export async function issueTokens(
  ctx: OAuthContext,
  client: Client,
  grant: Pick<StoredGrant, 'id' | 'userId' | 'clientId' | 'accountIds'>,
  scope: string[],
  refreshToken: string,
  jkt?: string,
  amr?: string[],
): Promise<TokenResponse> {
  const { session, answer } = await prepareTokens(ctx, client, grant, scope, refreshToken, jkt, amr);
  await ctx.sessions.create(session);
  await confirmGrantLive(ctx, grant.id, session.sid);
  return answer;
}

/**
 * The session and the response for a new access token; nothing is stored (a refresh sends the
 * session with its swap). The token names the user by the app's pairwise subject, as its ID
 * tokens and userinfo do, so two apps cannot match their users by their tokens; the edges find
 * the platform user in the session, checked against the token's user commitment.
 */
export async function prepareTokens(
  ctx: OAuthContext,
  client: Client,
  grant: Pick<StoredGrant, 'id' | 'userId' | 'clientId' | 'accountIds'>,
  scope: string[],
  refreshToken: string,
  jkt?: string,
  amr?: string[],
): Promise<PreparedTokens> {
  const ttl = ctx.settings.accessTokenTtlSeconds;
  const sid = randomUUID();
  // How the user signed in, for userinfo: keyed by the new session's random id, it says nothing until that session exists.
  if (amr && scope.includes('openid')) await ctx.store.set(sessionAmrKey(sid), JSON.stringify(amr), ttl);
  const userKey = newUserCommitmentKey();
  const session: SessionRecord = {
    sid,
    userId: grant.userId,
    kind: 'oauth',
    clientId: grant.clientId,
    grantId: grant.id,
    userKey,
    expiresAt: Math.floor(Date.now() / 1000) + ttl,
  };
  // OpenID Connect scopes stay on the grant and in the response: the access token carries API scopes only.
  const accessToken = await ctx.signer.sign(
    {
      sub: pairwiseSubject(client, grant.userId),
      userCommitment: userCommitment(userKey, grant.userId),
      sid,
      kind: 'oauth',
      clientId: grant.clientId,
      scope: apiScopes(scope),
      // The accounts the user chose for the app, as the grant holds them now: the services reach no other.
      ...(grant.accountIds ? { accounts: grant.accountIds } : {}),
      jkt,
    },
    ttl,
  );
  return {
    session,
    answer: {
      access_token: accessToken,
      token_type: jkt ? 'DPoP' : 'Bearer',
      expires_in: ttl,
      refresh_token: refreshToken,
      scope: scopeString(scope),
    },
  };
}

/**
 * Once the session is written: the grant must still be live, or the session ends at once (with
 * `alsoForget`, keys written with it) and the request fails. Revoking a grant ends the sessions
 * its index lists, so of a revocation and an issue racing, one of the two always ends the session.
 */
export async function confirmGrantLive(ctx: OAuthContext, grantId: string, sid: string, alsoForget: string[] = []): Promise<void> {
  if (await ctx.grants.touchIfActive(grantId)) return;
  await Promise.all([ctx.sessions.revoke(sid), alsoForget.length && ctx.store.del(...alsoForget)]);
  throw oauthErrors.invalidGrant('The grant has been revoked');
}
