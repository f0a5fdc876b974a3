import { AppError, errors } from '@trading/errors';
import { createRemoteJWKSet, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { Claims } from './claims';
import { ExpiringCache } from './expiring-cache';
import { ipAllowed } from './ip';
import type { PatAccess } from './scopes';
import type { SessionStore } from './sessions';
import { SigningKeyStates } from './signing-keys';

export interface AccessTokenSettings {
  /** The auth app's JWKS document. */
  jwksUrl: string;
  issuer: string;
  audience: string;
}

export const ACCESS_TOKEN_AUDIENCE = 'trading-api';
/** RFC 9068: access tokens say what they are, so no other JWT of ours passes for one. */
export const ACCESS_TOKEN_TYPE = 'at+jwt';

/**
 * Verifies a token's signature. `reloadKeys`: the token's `kid` is known live (auth published it)
 * but was not in the keys this verifier holds, so they are fetched again first.
 */
export type AccessTokenVerifier = (token: string, options?: { reloadKeys?: boolean }) => Promise<JWTPayload>;

/** At most one forced JWKS fetch per this many ms, however many tokens of a new key arrive at once. */
const FORCED_RELOAD_INTERVAL_MS = 1000;

/**
 * Verifies access-token signatures against the auth app's JWKS (fetched once, cached, refetched on
 * an unknown `kid` at most every 30 s, or at once when asked because the `kid` is known live).
 */
export function createAccessTokenVerifier(settings: AccessTokenSettings): AccessTokenVerifier {
  const jwks = createRemoteJWKSet(new URL(settings.jwksUrl), { cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000, timeoutDuration: 3000 });
  let lastForcedReload = 0;
  return async (token, options = {}) => {
    if (options.reloadKeys && Date.now() - lastForcedReload >= FORCED_RELOAD_INTERVAL_MS) {
      lastForcedReload = Date.now();
      await jwks.reload();
    }
    const { payload } = await jwtVerify(token, jwks, {
      issuer: settings.issuer,
      audience: settings.audience,
      algorithms: ['ES256'],
      typ: ACCESS_TOKEN_TYPE,
    });
    return payload;
  };
}

export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer\s+([A-Za-z0-9._~+/=-]+)\s*$/i.exec(authorization ?? '');
  return match?.[1];
}

/**
 * Authenticates a request at the edge (facade for REST, gateway for GraphQL): a valid
 * signature, a live session (revocation), and the PAT's IP restriction. What the caller may do
 * comes from the signed token alone; Redis only says the session is still live. Fails closed:
 * when session state cannot be read the caller gets 503, never access.
 */
export class EdgeAuthenticator {
  /**
   * Tokens whose signature already checked out, until they expire: liveness (revocation) and their
   * key's liveness (retirement) are still asked of Redis every time.
   */
  private readonly verified = new ExpiringCache<{ payload: JWTPayload; kid: string | undefined }>();
  private readonly keys: SigningKeyStates;
  /** OAuth sessions this edge has already noted as used (one Redis write per session per edge). */
  private readonly notedUsed = new ExpiringCache<true>();

  constructor(
    private readonly verify: AccessTokenVerifier,
    private readonly sessions: SessionStore,
    keys?: SigningKeyStates,
  ) {
    this.keys = keys ?? new SigningKeyStates(sessions.store);
  }

  async authenticate(authorization: string | undefined, clientIp: string | undefined): Promise<Claims> {
    const token = bearerToken(authorization);
    if (!token) throw new AppError('UNAUTHENTICATED', 'A bearer access token is required', { noCredentials: true });

    let payload: JWTPayload;
    let kid: string | undefined;
    try {
      const hit = this.verified.get(token);
      if (hit) ({ payload, kid } = hit);
      else {
        kid = decodeProtectedHeader(token).kid;
        payload = await this.verifyFresh(token, kid);
        if (typeof payload.exp === 'number') this.verified.set(token, { payload, kid }, payload.exp * 1000);
      }
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw errors.unauthenticated('The access token has expired');
      if (err instanceof joseErrors.JWKSTimeout || isNetworkFailure(err)) {
        throw errors.unavailable('Token verification is temporarily unavailable');
      }
      throw errors.unauthenticated('The access token is invalid');
    }
    const claims = claimsOf(payload);
    if (!claims) throw errors.unauthenticated('The access token is invalid');
    const { sid } = claims;

    let session;
    let keyState;
    try {
      [session, keyState] = await Promise.all([this.sessions.get(sid), kid ? this.keys.state(kid) : null]);
    } catch {
      throw errors.unavailable('Session state is temporarily unavailable; retry shortly');
    }
    // Checked on cache hits too: a retired key's tokens stop working everywhere the moment auth says so.
    if (keyState === 'retired') throw errors.unauthenticated('The access token was signed by a retired key');
    if (!session || session.userId !== claims.sub || session.kind !== claims.kind)
      throw errors.unauthenticated('The session has ended (revoked or expired)');
    if (!ipAllowed(clientIp, claims.ipAllowlist)) {
      throw new AppError('IP_NOT_ALLOWED', 'This token may not be used from this address');
    }
    if (claims.kind === 'oauth') await this.noteUsed(sid, session.expiresAt);
    const { ipAllowlist: _list, ...rest } = claims;
    return { ...rest, ip: clientIp };
  }

  /**
   * The first use of an OAuth access token closes its refresh's retry window (see
   * SessionStore.markUsed). Written before the request goes on, so a retry of that refresh that
   * races it sees the mark; a failed write is tried again on the next request, never refused.
   */
  private async noteUsed(sid: string, expiresAt: number): Promise<void> {
    if (this.notedUsed.get(sid)) return;
    try {
      await this.sessions.markUsed(sid, expiresAt);
      this.notedUsed.set(sid, true, expiresAt * 1000);
    } catch {
      // Redis refused the write (it answered the read just before): the next request notes it.
    }
  }

  /** A key new to this edge (just rotated in) is fetched at once when auth has published it as live. */
  private async verifyFresh(token: string, kid: string | undefined): Promise<JWTPayload> {
    try {
      return await this.verify(token);
    } catch (err) {
      if (!(err instanceof joseErrors.JWKSNoMatchingKey) || !kid) throw err;
      if ((await this.keys.stateUncached(kid).catch(() => null)) !== 'live') throw err;
      return this.verify(token, { reloadKeys: true });
    }
  }
}

/** The caller as the signed token describes it; null when a claim is missing or malformed. */
function claimsOf(payload: JWTPayload): (Omit<Claims, 'ip'> & { ipAllowlist: string[] }) | null {
  const {
    sub,
    sid,
    kind,
    scope,
    access,
    client_id: clientId,
    pat_id: patId,
    ip_allow: ipAllowlist = [],
  } = payload as Record<string, unknown>;
  if (typeof sub !== 'string' || typeof sid !== 'string' || (kind !== 'pat' && kind !== 'oauth') || typeof scope !== 'string') return null;
  if (kind === 'pat' && (typeof patId !== 'string' || (access !== 'READ_ONLY' && access !== 'READ_WRITE'))) return null;
  if (kind === 'oauth' && typeof clientId !== 'string') return null;
  if (!Array.isArray(ipAllowlist) || !ipAllowlist.every((e) => typeof e === 'string')) return null;
  return {
    sub,
    sid,
    kind,
    scope: scope.split(' ').filter(Boolean),
    ...(kind === 'pat' ? { patId: patId as string, access: access as PatAccess } : { clientId: clientId as string }),
    ipAllowlist: ipAllowlist as string[],
  };
}

/** The JWKS could not be fetched (as opposed to a bad token): the caller should retry, not re-authenticate. */
function isNetworkFailure(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EAI_AGAIN'].includes(String(code)) || /fetch failed/.test(String(message))
  );
}
