import { swapResult } from '@trading/redis';
import type { Client } from '../../registry/registry.service';
import type { OAuthContext } from '../context';
import { oauthErrors } from '../errors';
import { parseScopes } from '../scopes';
import { newRefreshToken, plausibleToken, refreshKey, type RefreshRecord } from '../token-store';
import { sameGrant } from '../grants';
import { issueTokens, type TokenResponse } from './issue';

/**
 * grant_type REFRESH_TOKEN / refresh_token (spec §4.1, §3; RFC 6749 §6; DESIGN §4). Single use:
 * the old token is spent and the new one stored in one atomic Redis script, so of two
 * concurrent refreshes exactly one succeeds. Presenting a spent token revokes the whole grant
 * (RFC 9700 §4.14.2), except within a short grace period after it was spent: that is a
 * concurrent refresh by the client itself, refused without ending the winner's new tokens.
 * `scope` may narrow the new access token, never widen it.
 */
export async function refreshTokenGrant(ctx: OAuthContext, client: Client, params: Record<string, string | undefined>): Promise<TokenResponse> {
  const token = params.refresh_token;
  if (!token) throw oauthErrors.invalidRequest('refresh_token is required');
  if (!plausibleToken(token)) throw oauthErrors.invalidGrant('The refresh token is invalid or has expired');

  const key = refreshKey(token);
  const found = swapResult(await ctx.store.get(key));
  if (!found) throw oauthErrors.invalidGrant('The refresh token is invalid or has expired');
  const record = JSON.parse(found.value) as RefreshRecord;
  if (found.spent) return reused(ctx, record, found.spentAt);
  if (record.grant.clientId !== client.clientId) throw oauthErrors.invalidGrant('The refresh token was issued to another client');
  if (record.expiresAt <= Date.now()) throw oauthErrors.invalidGrant('The refresh token is invalid or has expired');

  // The grant as PostgreSQL holds it decides, not the record in Redis: same user, app, client and scope, live.
  const stored = await ctx.grants.find(record.grant.id);
  if (!stored || !sameGrant(stored, record.grant, client.clientId) || !stored.activatedAt) throw oauthErrors.invalidGrant('The refresh token is invalid or has expired');
  if (stored.revokedAt) throw oauthErrors.invalidGrant('The grant has been revoked');

  let scope = stored.scope;
  const requested = params.scope ?? params.scopes;
  if (requested !== undefined) {
    const parsed = parseScopes(requested);
    if ('unknown' in parsed) throw oauthErrors.invalidScope(`"${parsed.unknown}" is not a scope`);
    const wider = parsed.scopes.filter((s) => !stored.scope.includes(s));
    if (wider.length) throw oauthErrors.invalidScope(`The grant does not include ${wider.join(' ')}; a refresh can only narrow the scope`);
    if (!parsed.scopes.length) throw oauthErrors.invalidScope('scope must name at least one scope');
    scope = parsed.scopes;
  }
  const next = newRefreshToken();
  const ttl = ctx.settings.refreshTokenTtlSeconds;
  const nextRecord: RefreshRecord = { grant: stored, expiresAt: Date.now() + ttl * 1000 };
  const swapped = await ctx.store.swap(key, refreshKey(next), JSON.stringify(nextRecord), ttl);
  if (!swapped) throw oauthErrors.invalidGrant('The refresh token is invalid or has expired');
  if (swapped.spent) return reused(ctx, record, swapped.spentAt);
  return issueTokens(ctx, stored, scope, next);
}

async function reused(ctx: OAuthContext, record: RefreshRecord, spentAt: number | undefined): Promise<never> {
  if (spentAt !== undefined && Date.now() - spentAt < ctx.settings.refreshReuseGraceSeconds * 1000) {
    throw oauthErrors.invalidGrant('The refresh token was just used by a concurrent request; use the refresh token that request received');
  }
  await ctx.grants.revoke(record.grant.id, 'REFRESH_TOKEN_REUSED');
  throw oauthErrors.invalidGrant('The refresh token was already used; the grant has been revoked');
}
