import { swapResult } from '@trading/redis';
import type { Client } from '../../registry/registry.service';
import type { OAuthContext } from '../context';
import { oauthErrors } from '../errors';
import { isVerifier, verifierMatches } from '../pkce';
import { codeKey, newRefreshToken, plausibleToken, refreshKey, type CodeRecord, type RefreshRecord } from '../token-store';
import { sameGrant, type StoredGrant } from '../grants';
import { issueIdToken } from '../id-token';
import { issueTokens, type TokenResponse } from './issue';

/**
 * grant_type AUTH_CODE / authorization_code (RFC 6749 §4.1.3, RFC 7636 §4.6).
 * The code is checked against the client, redirect URI and PKCE verifier before it is spent;
 * spending it and storing the first refresh token are one atomic swap, so it works once. A code
 * presented again revokes the grant its first use created (RFC 6749 §4.1.2, RFC 9700 §4.5).
 */
export async function authCodeGrant(
  ctx: OAuthContext,
  client: Client,
  params: Record<string, string | undefined>,
  jkt?: string,
): Promise<TokenResponse> {
  const { code, redirectUri, verifier } = requiredParams(params);
  const key = codeKey(code);
  const found = swapResult(await ctx.store.get(key));
  if (!found) throw oauthErrors.invalidGrant('The authorization code is invalid or has expired');
  const record = JSON.parse(found.value) as CodeRecord;
  // Before the reuse check: another client holding a leaked, spent code must not be able to
  // revoke the owner's grant with it. Checks that leave the code unspent: a wrong client or
  // guess cannot burn a user's code.
  if (record.grant.clientId !== client.clientId) throw oauthErrors.invalidGrant('The authorization code was issued to another client');
  if (found.spent) return reused(ctx, record);
  checkRedemption(record, redirectUri, verifier, jkt);
  const stored = await consentedGrant(ctx, record, client.clientId);

  const refreshToken = newRefreshToken();
  const ttl = ctx.settings.refreshTokenTtlSeconds;
  const swapped = await ctx.store.swap(key, refreshKey(refreshToken), JSON.stringify(firstRefreshRecord(record, ttl, jkt)), ttl);
  if (!swapped) throw oauthErrors.invalidGrant('The authorization code is invalid or has expired');
  if (swapped.spent) return reused(ctx, record);

  if (!(await ctx.grants.activate(stored.id))) throw oauthErrors.invalidGrant('The authorization code is invalid or has expired');
  const tokens = await issueTokens(ctx, client, stored, stored.scope, refreshToken, jkt, record.amr);
  // OpenID Connect: a grant with openid gets an ID token for this sign-in, with the request's nonce.
  if (!stored.scope.includes('openid')) return tokens;
  return { ...tokens, id_token: await issueIdToken(ctx, client, stored, tokens.access_token, record) };
}

/** The code, redirect URI and PKCE verifier a redemption must send; a code not worth looking up is refused at once. */
function requiredParams(params: Record<string, string | undefined>): { code: string; redirectUri: string; verifier: string } {
  const { code, redirect_uri: redirectUri, code_verifier: verifier } = params;
  if (!code) throw oauthErrors.invalidRequest('code is required');
  if (!redirectUri) throw oauthErrors.invalidRequest('redirect_uri is required (the one used in the authorization request)');
  if (!verifier) throw oauthErrors.invalidRequest('code_verifier is required (PKCE, S256)');
  if (!plausibleToken(code)) throw oauthErrors.invalidGrant('The authorization code is invalid or has expired');
  return { code, redirectUri, verifier };
}

/** The code is live, and redeemed as it was requested: same redirect URI, the PKCE verifier, the DPoP key it is bound to. */
function checkRedemption(record: CodeRecord, redirectUri: string, verifier: string, jkt: string | undefined): void {
  if (record.expiresAt <= Date.now()) throw oauthErrors.invalidGrant('The authorization code is invalid or has expired');
  if (record.redirectUri !== redirectUri)
    throw oauthErrors.invalidGrant('redirect_uri does not match the one in the authorization request');
  if (!isVerifier(verifier)) throw oauthErrors.invalidGrant('code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~');
  if (!verifierMatches(verifier, record.codeChallenge))
    throw oauthErrors.invalidGrant('code_verifier does not match the code_challenge (S256)');
  // RFC 9449 §10: a code requested with dpop_jkt (or pushed with a proof) is redeemed only with a proof of that key.
  if (record.dpopJkt && jkt !== record.dpopJkt)
    throw oauthErrors.invalidDpopProof(
      jkt
        ? 'This authorization code is bound to another DPoP key (dpop_jkt): prove the key the authorization request named'
        : 'This authorization code is bound to a DPoP key (dpop_jkt): send a DPoP proof signed by that key',
    );
}

/** The consent as PostgreSQL recorded it, not as Redis tells it: same user, app, client and scope, fresh, never redeemed. */
async function consentedGrant(ctx: OAuthContext, record: CodeRecord, clientId: string): Promise<StoredGrant> {
  const stored = await ctx.grants.find(record.grant.id);
  const fresh = stored && Date.now() - stored.createdAt.getTime() <= (ctx.settings.codeTtlSeconds + 5) * 1000;
  if (!stored || !sameGrant(stored, record.grant, clientId) || !fresh || stored.activatedAt || stored.revokedAt) {
    throw oauthErrors.invalidGrant('The authorization code is invalid or has expired');
  }
  return stored;
}

/** A DPoP exchange makes a DPoP grant: every refresh carries a proof (of any key the client holds), never the key itself. */
function firstRefreshRecord(record: CodeRecord, ttl: number, jkt: string | undefined): RefreshRecord {
  return {
    grant: record.grant,
    expiresAt: Date.now() + ttl * 1000,
    ...(jkt ? { dpop: true as const } : {}),
    ...(record.authTime ? { authTime: record.authTime } : {}),
    ...(record.amr ? { amr: record.amr } : {}),
  };
}

async function reused(ctx: OAuthContext, record: CodeRecord): Promise<never> {
  await ctx.grants.revoke(record.grant.id, 'CODE_REUSED');
  throw oauthErrors.invalidGrant('The authorization code was already used; every token issued with it has been revoked');
}
