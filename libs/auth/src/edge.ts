import { AppError, errors } from '@trading/errors';
import { createRemoteJWKSet, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { accountsClaim, envClaim, type Claims } from './claims';
import { confirmedKey, DPOP_ALGORITHMS, DpopError, dpopChallenge, DpopVerifier } from './dpop';
import { ExpiringCache } from './expiring-cache';
import { ipAllowed } from './ip';
import type { PatAccess } from './scopes';
import type { SessionRecord, SessionStore } from './sessions';
import { SigningKeyStates, type SigningKeyState } from './signing-keys';
import { userCommitment } from './user-commitment';

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

/** `Authorization: Bearer <token>` (RFC 6750) or `Authorization: DPoP <token>` (RFC 9449 §7.1). */
function presentedToken(authorization: string | undefined): { scheme: 'Bearer' | 'DPoP'; token: string } | undefined {
  const match = /^(Bearer|DPoP)\s+([A-Za-z0-9._~+/=-]+)\s*$/i.exec(authorization ?? '');
  if (!match) return undefined;
  return { scheme: match[1]!.toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer', token: match[2]! };
}

/** What the edge needs to check a DPoP proof against the request it came with. */
export interface DpopRequest {
  /** The `DPoP` header. */
  proof: string | undefined;
  method: string;
  /** The request's public URL(s), built from configuration (never from the Host header). */
  urls: readonly string[];
}

/**
 * For a re-check of a request already authenticated, proof included (the order-event stream
 * confirms its session every second with the headers it opened with): the proof is not checked
 * again, the token's binding still is.
 */
export const PROOF_CHECKED_AT_OPEN = Symbol('DPoP proof checked when the request was accepted');

/** Offered to a request that sent no credentials: a Bearer challenge and a DPoP one (RFC 6750 §3, RFC 9449 §7.1). */
const NO_CREDENTIALS_CHALLENGE = `Bearer realm="trading-api", DPoP realm="trading-api", algs="${DPOP_ALGORITHMS.join(' ')}"`;

/** A DPoP request refused: 401 with a `DPoP` challenge (RFC 9449 §7.1). */
function dpopRefusal(error: 'invalid_token' | 'invalid_dpop_proof', message: string): AppError {
  return new AppError('UNAUTHENTICATED', message, { challenge: dpopChallenge(error, message), details: { error } });
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

  private readonly dpop: DpopVerifier;

  constructor(
    private readonly verify: AccessTokenVerifier,
    private readonly sessions: SessionStore,
    keys?: SigningKeyStates,
    dpop?: DpopVerifier,
  ) {
    this.keys = keys ?? new SigningKeyStates(sessions.store);
    // The proofs' replay cache is the sessions' Redis: every instance of every edge shares it.
    this.dpop = dpop ?? new DpopVerifier(sessions.store);
  }

  /**
   * `request`: the method, public URL and DPoP header of the request, for tokens bound to a key
   * (`cnf.jkt`): those are accepted only as `Authorization: DPoP` with a valid proof of that key
   * for this request. Without it, a bound token is refused (fail closed).
   */
  async authenticate(
    authorization: string | undefined,
    clientIp: string | undefined,
    request?: DpopRequest | typeof PROOF_CHECKED_AT_OPEN,
  ): Promise<Claims> {
    const presented = presentedToken(authorization);
    // No credentials: both schemes are offered, the DPoP one with the algorithms it takes (RFC 9449 §7.1).
    if (!presented)
      throw new AppError('UNAUTHENTICATED', 'A bearer or DPoP access token is required', {
        noCredentials: true,
        challenge: NO_CREDENTIALS_CHALLENGE,
      });
    const { token } = presented;
    // A request made with the DPoP scheme is refused with a DPoP challenge (RFC 9449 §7.1), whatever the reason.
    const refuse = (message: string) =>
      presented.scheme === 'DPoP' ? dpopRefusal('invalid_token', message) : errors.unauthenticated(message);

    const { payload, kid } = await this.signedPayload(token, refuse);
    const claims = claimsOf(payload);
    const jkt = confirmedKey(payload);
    if (!claims || jkt === null) throw refuse('The access token is invalid');
    const { sid } = claims;

    const { session, keyState } = await this.sessionAndKeyState(sid, kid);
    // Checked on cache hits too: a retired key's tokens stop working everywhere the moment auth says so.
    if (keyState === 'retired') throw refuse('The access token was signed by a retired key');
    if (!session || !sameUser(session, claims) || session.kind !== claims.kind) throw refuse('The session has ended (revoked or expired)');
    if (!ipAllowed(clientIp, claims.ipAllowlist)) {
      throw new AppError('IP_NOT_ALLOWED', 'This token may not be used from this address');
    }
    await this.checkBinding(presented.scheme, token, jkt, request);
    if (claims.kind === 'oauth') await this.noteUsed(sid, session.expiresAt);
    const { ipAllowlist: _list, userCommitment: _commitment, ...rest } = claims;
    // Inside the platform the caller is the platform user, whatever subject its app knows it by.
    return { ...rest, sub: session.userId, ip: clientIp };
  }

  /** The token's claims and key id, its signature checked (or already checked, until it expires). */
  private async signedPayload(
    token: string,
    refuse: (message: string) => AppError,
  ): Promise<{ payload: JWTPayload; kid: string | undefined }> {
    try {
      const hit = this.verified.get(token);
      if (hit) return hit;
      const kid = decodeProtectedHeader(token).kid;
      const payload = await this.verifyFresh(token, kid);
      if (typeof payload.exp === 'number') this.verified.set(token, { payload, kid }, payload.exp * 1000);
      return { payload, kid };
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw refuse('The access token has expired');
      if (err instanceof joseErrors.JWKSTimeout || isNetworkFailure(err)) {
        throw errors.unavailable('Token verification is temporarily unavailable');
      }
      throw refuse('The access token is invalid');
    }
  }

  /** The session and the signing key's state, read together; unreadable is 503, never access. */
  private async sessionAndKeyState(
    sid: string,
    kid: string | undefined,
  ): Promise<{ session: SessionRecord | null; keyState: SigningKeyState | null }> {
    try {
      const [session, keyState] = await Promise.all([this.sessions.get(sid), kid ? this.keys.state(kid) : null]);
      return { session, keyState };
    } catch {
      throw errors.unavailable('Session state is temporarily unavailable; retry shortly');
    }
  }

  /**
   * RFC 9449 §7: a token bound to a key goes with `Authorization: DPoP` and a proof, by that key,
   * of this request (method, URL, fresh, never seen, `ath` of this token); a bearer token goes
   * with `Authorization: Bearer`. Checked last, so a proof's `jti` is spent only by a request
   * that is otherwise accepted.
   */
  private async checkBinding(
    scheme: 'Bearer' | 'DPoP',
    token: string,
    jkt: string | undefined,
    request: DpopRequest | typeof PROOF_CHECKED_AT_OPEN | undefined,
  ): Promise<void> {
    if (!jkt) {
      if (scheme === 'DPoP')
        throw dpopRefusal('invalid_token', 'This access token is not bound to a DPoP key: send it as Authorization: Bearer');
      return;
    }
    if (scheme !== 'DPoP')
      throw dpopRefusal('invalid_token', 'This access token is bound to a DPoP key: send it as Authorization: DPoP, with a DPoP proof');
    if (request === PROOF_CHECKED_AT_OPEN) return;
    if (!request) throw dpopRefusal('invalid_dpop_proof', 'DPoP proofs are not accepted at this endpoint');
    try {
      await this.dpop.verify({ proof: request.proof, method: request.method, urls: request.urls, accessToken: token, jkt });
    } catch (err) {
      if (err instanceof DpopError) throw dpopRefusal('invalid_dpop_proof', err.message);
      throw errors.unavailable('DPoP proof state is temporarily unavailable; retry shortly');
    }
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

type SignedClaims = Omit<Claims, 'ip'> & { ipAllowlist: string[]; userCommitment?: string };

/**
 * Whether the session is the token's user's: an OAuth token names its user by the app's pairwise
 * subject and commits to the platform user id, which the session's key opens; a PAT token (and an
 * OAuth token signed before commitments) names the platform user id itself.
 */
function sameUser(session: SessionRecord, claims: SignedClaims): boolean {
  if (claims.userCommitment === undefined) return session.userId === claims.sub;
  return typeof session.userKey === 'string' && userCommitment(session.userKey, session.userId) === claims.userCommitment;
}

/** The caller as the signed token describes it; null when a claim is missing or malformed. */
function claimsOf(payload: JWTPayload): SignedClaims | null {
  const {
    sub,
    sid,
    kind,
    scope,
    access,
    client_id: clientId,
    pat_id: patId,
    ip_allow: ipAllowlist = [],
    user_commitment: commitment,
    accounts: accountsValue,
    env: envValue,
  } = payload as Record<string, unknown>;
  if (typeof sub !== 'string' || typeof sid !== 'string' || (kind !== 'pat' && kind !== 'oauth') || typeof scope !== 'string') return null;
  if (!kindClaimsValid(kind, { access, clientId, patId, ipAllowlist, commitment })) return null;
  // A token limited to chosen accounts names them; a malformed list refuses the token rather than reach them all.
  const accounts = accountsClaim(accountsValue);
  if (accounts === null) return null;
  // The issuing deployment's environment: a value not of ours refuses the token.
  const env = envClaim(envValue);
  if (env === null) return null;
  return {
    sub,
    sid,
    kind,
    scope: scope.split(' ').filter(Boolean),
    ...(kind === 'pat' ? { patId: patId as string, access: access as PatAccess } : { clientId: clientId as string }),
    ipAllowlist: ipAllowlist as string[],
    ...(commitment !== undefined ? { userCommitment: commitment as string } : {}),
    ...(accounts ? { accounts } : {}),
    ...(env ? { env } : {}),
  };
}

/** The claims beyond who the caller is: a PAT's id and access, an OAuth token's client, the address list, a commitment (OAuth only). */
function kindClaimsValid(
  kind: 'pat' | 'oauth',
  { access, clientId, patId, ipAllowlist, commitment }: Record<'access' | 'clientId' | 'patId' | 'ipAllowlist' | 'commitment', unknown>,
): boolean {
  if (kind === 'pat' && (typeof patId !== 'string' || (access !== 'READ_ONLY' && access !== 'READ_WRITE'))) return false;
  if (kind === 'oauth' && typeof clientId !== 'string') return false;
  if (!Array.isArray(ipAllowlist) || !ipAllowlist.every((e) => typeof e === 'string')) return false;
  if (commitment !== undefined && (kind !== 'oauth' || typeof commitment !== 'string')) return false;
  return true;
}

/** The JWKS could not be fetched (as opposed to a bad token): the caller should retry, not re-authenticate. */
function isNetworkFailure(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EAI_AGAIN'].includes(String(code)) || /fetch failed/.test(String(message))
  );
}
