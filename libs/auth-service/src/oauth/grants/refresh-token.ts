import { confirmedKey, type SessionRecord } from '@trading/auth';
import { swapResult, type SwapWrites } from '@trading/redis';
import { decodeJwt } from 'jose';
import type { Client } from '../../registry/registry.service';
import type { OAuthContext } from '../context';
import { oauthErrors } from '../errors';
import { parseScopes } from '../scopes';
import { dpopGrant, newRefreshToken, plausibleToken, refreshAnswerKey, refreshKey, type RefreshRecord } from '../token-store';
import { sameGrant, type StoredGrant } from '../grants';
import { issueIdToken } from '../id-token';
import { confirmGrantLive, prepareTokens, type TokenResponse } from './issue';

/** The sign-in a refresh record keeps (auth_time, amr), for the ID tokens of its refreshes. */
const signInOf = ({ authTime, amr }: RefreshRecord) => ({ ...(authTime ? { authTime } : {}), ...(amr ? { amr } : {}) });

/**
 * grant_type REFRESH_TOKEN / refresh_token (either spelling of the grant type; RFC 6749 §6). Single use:
 * the old token is spent and the new one stored in one atomic Redis script, so of two
 * concurrent refreshes exactly one succeeds. Within a window after that (60 s by default), the
 * same client presenting the same spent token with the same DPoP binding (a proof of the key that
 * first refresh proved, or no proof for a bearer grant) gets the same new pair again while that pair is unused (a
 * retry after a timeout logs nobody out; a thief racing the client holds the same tokens, and the
 * next rotation by either side exposes the other); any other presentation of a spent token (another
 * key, no proof for a bound grant, a proof for a bearer one), a reuse after the window, or one after
 * the new refresh token or access token was used, revokes the whole grant (RFC 9700 §4.14.2).
 * The client is checked before any of that. `scope` may narrow the new access token, never widen it.
 */
export async function refreshTokenGrant(
  ctx: OAuthContext,
  client: Client,
  params: Record<string, string | undefined>,
  jkt?: string,
  /** The record as `readRefreshRecord` started reading it, while the client was authenticated. */
  read?: Promise<string | null>,
): Promise<TokenResponse> {
  const token = params.refresh_token;
  if (!token) throw oauthErrors.invalidRequest('refresh_token is required');
  if (!plausibleToken(token)) throw oauthErrors.invalidGrant('The refresh token is invalid or has expired');

  const key = refreshKey(token);
  const found = swapResult(await (read ?? ctx.store.get(key)));
  if (!found) throw oauthErrors.invalidGrant('The refresh token is invalid or has expired');
  const record = JSON.parse(found.value) as RefreshRecord;
  if (record.grant.clientId !== client.clientId) throw oauthErrors.invalidGrant('The refresh token was issued to another client');
  if (found.spent) return reused(ctx, token, record, found.spentAt, jkt);
  checkRefreshable(record, jkt);
  const stored = await liveGrant(ctx, record, client.clientId);
  const scope = narrowedScope(stored.scope, params);
  const next = newRefreshToken();
  const ttl = ctx.settings.refreshTokenTtlSeconds;
  const bound = dpopGrant(record) ? jkt : undefined;
  const nextRecord: RefreshRecord = {
    grant: stored,
    expiresAt: Date.now() + ttl * 1000,
    ...(bound ? { dpop: true as const } : {}),
    ...signInOf(record),
  };
  // Signed before the swap, so that the swap also writes the new session and the answer a retry
  // gets: one Redis round trip, and neither exists unless this request spent the token.
  const { session, answer } = await prepareTokens(ctx, client, stored, scope, next, bound, record.amr);
  // OpenID Connect Core §12.2: a refresh that keeps openid gets a new ID token: same sub, the
  // original sign-in's auth_time (kept in the sealed refresh record), a new iat, and no nonce.
  if (scope.includes('openid'))
    answer.id_token = await issueIdToken(ctx, client, { userId: stored.userId, scope }, answer.access_token, signInOf(record));
  const { writes, answerKey } = sessionAndAnswerWrites(ctx, token, session, answer);
  const swapped = await ctx.store.swap(key, refreshKey(next), JSON.stringify(nextRecord), ttl, writes);
  if (!swapped) throw oauthErrors.invalidGrant('The refresh token is invalid or has expired');
  if (swapped.spent) return reused(ctx, token, record, swapped.spentAt, jkt);
  await confirmGrantLive(ctx, stored.id, session.sid, [answerKey]);
  return answer;
}

/**
 * A grant's kind is fixed at the code exchange: a DPoP grant refreshes with a proof, and its new
 * access token is bound to the key that proof shows (the refresh token is bound to no key,
 * RFC 9449 §5, so the client may rotate its key); a bearer grant refreshes without one, and is
 * never turned into a DPoP grant mid-life. Checked before anything is spent, so a request of the
 * wrong kind can neither refresh nor burn the owner's token.
 */
function checkRefreshable(record: RefreshRecord, jkt: string | undefined): void {
  if (dpopGrant(record) && !jkt)
    throw oauthErrors.invalidDpopProof('This grant was authorized with DPoP: send a DPoP proof with every refresh');
  if (!dpopGrant(record) && jkt)
    throw oauthErrors.invalidDpopProof(
      'This grant was authorized without DPoP, so its tokens stay bearer tokens: refresh without a DPoP proof, or authorize again with one for DPoP-bound tokens',
    );
  if (record.expiresAt <= Date.now()) throw oauthErrors.invalidGrant('The refresh token is invalid or has expired');
}

/** The grant as PostgreSQL holds it decides, not the record in Redis: same user, app, client and scope, live. */
async function liveGrant(ctx: OAuthContext, record: RefreshRecord, clientId: string): Promise<StoredGrant> {
  const stored = await ctx.grants.find(record.grant.id);
  if (!stored || !sameGrant(stored, record.grant, clientId) || !stored.activatedAt)
    throw oauthErrors.invalidGrant('The refresh token is invalid or has expired');
  if (stored.revokedAt) throw oauthErrors.invalidGrant('The grant has been revoked');
  return stored;
}

/** The grant's scope, or the narrower one the request names (`scope` or `scopes`); never a wider one. */
function narrowedScope(granted: string[], params: Record<string, string | undefined>): string[] {
  const requested = params.scope ?? params.scopes;
  if (requested === undefined) return granted;
  const parsed = parseScopes(requested);
  if ('unknown' in parsed) throw oauthErrors.invalidScope(`"${parsed.unknown}" is not a scope`);
  const wider = parsed.scopes.filter((s) => !granted.includes(s));
  if (wider.length) throw oauthErrors.invalidScope(`The grant does not include ${wider.join(' ')}; a refresh can only narrow the scope`);
  if (!parsed.scopes.length) throw oauthErrors.invalidScope('scope must name at least one scope');
  return parsed.scopes;
}

/** What the swap writes besides the new refresh token: the new session, and the answer a retry within the window gets. */
function sessionAndAnswerWrites(
  ctx: OAuthContext,
  token: string,
  session: SessionRecord,
  answer: TokenResponse,
): { writes: Required<SwapWrites>; answerKey: string } {
  const writes = ctx.sessions.creation(session);
  const answerKey = refreshAnswerKey(token);
  const grace = ctx.settings.refreshReuseGraceSeconds;
  if (grace > 0)
    writes.values.push({
      key: answerKey,
      value: ctx.retryCipher.encrypt(answerKey, JSON.stringify(answer)),
      ttlSeconds: grace + 1,
      sealed: true,
    });
  return { writes, answerKey };
}

/**
 * Starts reading a refresh token's record at once, so that it travels to Redis with the client
 * authentication's reads; nothing is decided on it until the client has authenticated (an error
 * is the grant's to report). Undefined for a token not worth looking up.
 */
export function readRefreshRecord(ctx: OAuthContext, params: Record<string, string | undefined>): Promise<string | null> | undefined {
  const token = params.refresh_token;
  if (!plausibleToken(token)) return undefined;
  const read = ctx.store.get(refreshKey(token));
  read.catch(() => undefined); // not unhandled if the client fails first; the grant awaits it again
  return read;
}

/**
 * A spent token again: within the window, the answer it got (waiting a moment for a refresh still
 * under way), unless that answer's tokens have been used since (the client moved on, so this is
 * someone else); after the window, or in that case, the grant ends. Only the client's own retry
 * carries the binding the token was spent with (`jkt`: a proof of the key the first refresh
 * proved, which the kept access token is bound to, or none for a bearer grant): any other presentation is
 * someone else's, and ends the grant at once, so a thief can neither take the client's pair nor
 * hand the client its own.
 */
async function reused(
  ctx: OAuthContext,
  token: string,
  record: RefreshRecord,
  spentAt: number | undefined,
  jkt: string | undefined,
): Promise<TokenResponse> {
  const anotherBinding =
    'The refresh token was already used, and this request does not prove the key its first use was bound to (or none, for a bearer grant); the grant has been revoked';
  if (!!jkt !== dpopGrant(record)) return endGrant(ctx, record, anotherBinding);
  const windowMs = ctx.settings.refreshReuseGraceSeconds * 1000;
  if (spentAt !== undefined && Date.now() - spentAt < windowMs) {
    for (let waited = 0; waited <= 1500; waited += 50) {
      const kept = await ctx.store.get(refreshAnswerKey(token));
      if (kept) {
        const answer = JSON.parse(ctx.retryCipher.decrypt(refreshAnswerKey(token), kept)) as TokenResponse;
        const claims = decodeJwt(answer.access_token); // our own token, kept encrypted: its claims are as signed
        if (confirmedKey(claims) !== jkt) return endGrant(ctx, record, anotherBinding);
        if (await movedOn(ctx, answer))
          return endGrant(
            ctx,
            record,
            'The refresh token was already used, and the tokens it was exchanged for have been used since; the grant has been revoked',
          );
        // A pair whose grant has ended since works nowhere: no answer to give.
        if (typeof claims.sid !== 'string' || !(await ctx.sessions.get(claims.sid)))
          throw oauthErrors.invalidGrant('The grant has been revoked');
        return answer;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw oauthErrors.invalidGrant('The refresh token was just used by a concurrent request; use the refresh token that request received');
  }
  return endGrant(ctx, record, 'The refresh token was already used; the grant has been revoked');
}

/** Reuse detection: the grant and every token issued under it end. */
async function endGrant(ctx: OAuthContext, record: RefreshRecord, why: string): Promise<never> {
  await ctx.grants.revoke(record.grant.id, 'REFRESH_TOKEN_REUSED');
  throw oauthErrors.invalidGrant(why);
}

/** The pair a refresh gave has been used: its refresh token spent, or its access token accepted by an edge. */
async function movedOn(ctx: OAuthContext, answer: TokenResponse): Promise<boolean> {
  if (swapResult(await ctx.store.get(refreshKey(answer.refresh_token)))?.spent) return true;
  const { sid } = decodeJwt(answer.access_token); // our own token, kept encrypted: its claims are as signed
  return typeof sid === 'string' && (await ctx.sessions.wasUsed(sid));
}
