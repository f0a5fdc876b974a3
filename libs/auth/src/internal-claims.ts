import { randomUUID, type KeyObject } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { accountsClaim, envClaim, type Claims } from './claims';
import { ExpiringCache } from './expiring-cache';
import { SCOPES } from './scopes';
import type { ServiceKey, ServiceName, TrustedServiceKeys } from './service-identity';

/**
 * The verified caller travels from the edge to the service behind it in this header: a JWT
 * signed with the sender's own private key, addressed to one service (`aud`), living seconds.
 * Only internal listeners read it; public listeners drop it (libs/service).
 */
export const INTERNAL_CLAIMS_HEADER = 'x-internal-claims';
/**
 * The client address an edge decided on, for a request it proxies without a signed-in caller
 * (e.g. /pat/login): claims for nobody (`sub` below, no scope) that carry only `ip`.
 */
export const CLIENT_ADDRESS_HEADER = 'x-internal-client-address';
export const CLIENT_ADDRESS_SUBJECT = 'client-address';
const TYPE = 'internal+jwt';
export const INTERNAL_CLAIMS_LIFETIME_SECONDS = 15;

/** No user token carries it: banking's hold API, for the OMS's own identity only. */
export const INTERNAL_HOLDS_SCOPE = 'internal:holds';
/** No user token carries it: the back office (auth's admin API acting for the service team) on each domain's internal API. */
export const INTERNAL_BACK_OFFICE_SCOPE = 'internal:back-office';
/** The subject of back-office calls: the service team, not a user. */
export const BACK_OFFICE_SUBJECT = 'back-office';

const USER_SCOPES: readonly string[] = SCOPES;

/**
 * Who may address whom, and the most a sender may claim there. The edges (facade, gateway)
 * pass on what a user's token granted; a service acting for a user gets only what its job
 * needs, so one compromised service cannot impersonate users everywhere.
 */
export const INTERNAL_TRUST: Record<ServiceName, Partial<Record<ServiceName, readonly string[]>>> = {
  gateway: { 'rest-facade': USER_SCOPES },
  accounts: { gateway: USER_SCOPES, oms: ['read:accounts'], banking: ['read:accounts'], auth: [INTERNAL_BACK_OFFICE_SCOPE] },
  banking: { gateway: USER_SCOPES, oms: ['read:banking', INTERNAL_HOLDS_SCOPE], auth: [INTERNAL_BACK_OFFICE_SCOPE] },
  oms: { gateway: USER_SCOPES, auth: [INTERNAL_BACK_OFFICE_SCOPE] },
  auth: { 'rest-facade': ['read:accounts', 'write:accounts'] },
  'rest-facade': {},
};

export class InternalClaimsSigner {
  /** Headers already signed for the same claims and audience, reused for half their life (an ES256 signature per request is the edges' largest cost). */
  private readonly recent = new ExpiringCache<string>();

  constructor(
    private readonly key: ServiceKey,
    private readonly lifetimeSeconds = INTERNAL_CLAIMS_LIFETIME_SECONDS,
  ) {}

  /**
   * `sign`, or the header signed for the same claims and audience in the last half-lifetime.
   * The receiver sees a header at least half its life away from expiry; `jti` then names the
   * header, not the request (no receiver keeps a replay list: the lifetime is the bound).
   */
  async signFor(claims: Claims, audience: ServiceName): Promise<string> {
    const key = `${audience}\n${JSON.stringify(claims)}`;
    const cached = this.recent.get(key);
    if (cached) return cached;
    const header = await this.sign(claims, audience);
    this.recent.set(key, header, Date.now() + (this.lifetimeSeconds * 1000) / 2);
    return header;
  }

  get service(): ServiceName {
    return this.key.service;
  }

  /** The client address for a proxied request (CLIENT_ADDRESS_HEADER). */
  signClientAddress(ip: string, audience: ServiceName): Promise<string> {
    return this.sign({ sub: CLIENT_ADDRESS_SUBJECT, sid: CLIENT_ADDRESS_SUBJECT, kind: 'pat', scope: [], ip }, audience);
  }

  sign(claims: Claims, audience: ServiceName): Promise<string> {
    const { caller: _caller, ...rest } = claims;
    return (
      new SignJWT({ ...rest })
        .setProtectedHeader({ alg: 'ES256', kid: this.key.kid, typ: TYPE })
        .setIssuer(this.key.service)
        .setAudience(audience)
        .setJti(randomUUID())
        .setIssuedAt()
        // Rounded up: a header lives at least its lifetime (rounding down could leave it a millisecond).
        .setExpirationTime(Math.ceil(Date.now() / 1000) + this.lifetimeSeconds)
        .sign(this.key.privateKey)
    );
  }
}

export class InternalClaimsVerifier {
  /** Headers already verified, until their `exp`: the same header arrives once per request for its whole life. */
  private readonly verified = new ExpiringCache<Claims>();

  constructor(
    private readonly audience: ServiceName,
    private readonly trusted: TrustedServiceKeys,
  ) {}

  /** The key that signed the header and the most its service may claim here; null when this service trusts neither. */
  private trustedSigner(header: string): { signer: { service: ServiceName; key: KeyObject }; ceiling: readonly string[] } | null {
    const { kid } = decodeProtectedHeader(header);
    const signer = kid ? this.trusted.get(kid) : undefined;
    const ceiling = signer && INTERNAL_TRUST[this.audience][signer.service];
    if (!signer || !ceiling) return null;
    return { signer, ceiling };
  }

  /**
   * Returns null for a missing, forged, expired, misaddressed or over-reaching header, and for
   * a client-address header read as claims (or the other way round).
   */
  async verify(header: string | undefined, expect: 'claims' | 'client-address' = 'claims'): Promise<Claims | null> {
    if (!header) return null;
    const cached = this.verified.get(`${expect}\n${header}`);
    if (cached) return cached;
    try {
      const trusted = this.trustedSigner(header);
      if (!trusted) return null;
      const { signer, ceiling } = trusted;
      const { payload } = await jwtVerify(header, signer.key, {
        algorithms: ['ES256'],
        typ: TYPE,
        issuer: signer.service,
        audience: this.audience,
        maxTokenAge: INTERNAL_CLAIMS_LIFETIME_SECONDS * 2,
        requiredClaims: ['jti', 'iat', 'exp'],
      });
      const claims = claimsWithin(payload, signer.service, ceiling, expect);
      if (!claims) return null;
      this.verified.set(`${expect}\n${header}`, claims, (payload.exp ?? 0) * 1000);
      return claims;
    } catch {
      return null;
    }
  }
}

/**
 * The claims a verified header carries, or null when they are malformed, of the other kind than
 * expected (a client address read as claims, or the other way round), or reach beyond the ceiling.
 */
function claimsWithin(
  payload: JWTPayload,
  caller: ServiceName,
  ceiling: readonly string[],
  expect: 'claims' | 'client-address',
): Claims | null {
  const scope = payload['scope'];
  if (typeof payload.sub !== 'string' || typeof payload['sid'] !== 'string' || !Array.isArray(scope)) return null;
  if ((payload.sub === CLIENT_ADDRESS_SUBJECT) !== (expect === 'client-address')) return null;
  if (!scope.every((s) => typeof s === 'string' && ceiling.includes(s))) return null;
  // Dropping a malformed account list would widen the caller to every account: refuse instead.
  const accounts = accountsClaim(payload['accounts']);
  if (accounts === null) return null;
  // An environment that is not one of ours is refused rather than read as "not DEV".
  const env = envClaim(payload['env']);
  if (env === null) return null;
  return {
    sub: payload.sub,
    sid: payload['sid'] as string,
    kind: payload['kind'] === 'oauth' ? 'oauth' : 'pat',
    clientId: payload['clientId'] as string | undefined,
    patId: payload['patId'] as string | undefined,
    scope: scope as string[],
    access: payload['access'] as Claims['access'],
    ip: payload['ip'] as string | undefined,
    ...(accounts ? { accounts } : {}),
    ...(env ? { env } : {}),
    caller,
  };
}
