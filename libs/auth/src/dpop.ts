import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify, type JWK, type JWTPayload } from 'jose';
import type { KeyValueStore } from '@trading/redis';

/**
 * DPoP (RFC 9449): sender-constrained tokens. A client proves, on every token request and every
 * API call, that it holds the private key its tokens are bound to (`cnf.jkt`, the key's RFC 7638
 * thumbprint) by signing a short-lived proof of that one request. This file is the one place a
 * proof is checked: auth's token endpoint and PAT login, and both edges (facade and gateway).
 */

/**
 * The JWS algorithms a proof may use: advertised as `dpop_signing_alg_values_supported` and in `algs`.
 * The ones FAPI 2.0 allows for every signature, and no RS256 (PKCS#1 v1.5): the same set client
 * assertions take.
 */
export const DPOP_ALGORITHMS = ['ES256', 'EdDSA', 'PS256'] as const;
const DPOP_PROOF_TYPE = 'dpop+jwt';
/** A proof's `iat` may be this many seconds from our clock, either way. */
const DPOP_IAT_WINDOW_SECONDS = 60;
/** Server nonces change this often; the current and the previous one are accepted. */
const DPOP_NONCE_PERIOD_SECONDS = 300;
/** An RSA-4096 key in the header still fits. */
const MAX_PROOF_LENGTH = 8192;
const MAX_JTI_LENGTH = 256;

/** `invalid_dpop_proof`: the proof is missing or wrong; `use_dpop_nonce`: it lacks the server's current nonce. */
export type DpopErrorCode = 'invalid_dpop_proof' | 'use_dpop_nonce';

/** A proof refused, with the reason (safe to show the client). */
export class DpopError extends Error {
  constructor(
    readonly error: DpopErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'DpopError';
  }
}

export interface DpopProofCheck {
  /** The request's `DPoP` header as received (undefined: none was sent). */
  proof: string | undefined;
  /** The request's method (`htm`). */
  method: string;
  /**
   * The public URLs this request may have been addressed to (`htu`), from configuration, never from
   * a Host header; query and fragment are ignored (RFC 9449 §4.3).
   */
  urls: readonly string[];
  /** At a resource: the access token sent with the proof, whose SHA-256 `ath` must carry. */
  accessToken?: string;
  /** The key the token or grant is bound to: the proof's key must have this thumbprint. */
  jkt?: string;
  /** When a server nonce is required: the nonces accepted now. */
  nonces?: DpopNonces;
}

export interface VerifiedDpopProof {
  /** RFC 7638 SHA-256 thumbprint of the proof's public key (base64url): what `cnf.jkt` carries. */
  jkt: string;
  jti: string;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');

/** The replay cache: one key per (proof key, jti), shared by every instance of every service through Redis. */
const dpopJtiKey = (jkt: string, jti: string) => `dpop-jti:${sha256(`${jkt}\n${jti}`)}`;

/** The `ath` claim for an access token (RFC 9449 §4.2). */
export const accessTokenHash = (accessToken: string) => sha256(accessToken);

/** RFC 3986 §2.3: characters that mean the same escaped or not (tested one character at a time, so unanchored). */
const UNRESERVED = /[A-Za-z0-9\-._~]/;

/**
 * Scheme, host and path, normalised as RFC 3986 §6.2.2 and §6.2.3 say (RFC 9449 §4.3 compares
 * `htu` after them): scheme and host in lower case, no default port, an empty path as `/`,
 * percent-escapes of unreserved characters decoded and the others in upper case, then dot
 * segments removed (after decoding, so `%2E%2E` counts as `..`). Query and fragment are ignored.
 */
function normalisedUrl(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 2048 || !URL.canParse(value)) return null;
  const url = new URL(value);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  const path = url.pathname.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    // Stryker disable next-line MethodExpression: both sides are normalised, so either case compares the same
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
  // Only unreserved characters were decoded, so the URL still parses.
  const again = new URL(`${url.protocol}//${url.host}${path}`);
  return `${again.protocol}//${again.host}${again.pathname}`;
}

/**
 * Verifies DPoP proofs (RFC 9449 §4.3): one compact JWS of `typ` dpop+jwt, signed with an allowed
 * algorithm by the public key in its `jwk` header (a private or symmetric key is refused); `htm`
 * and `htu` naming this request; `iat` within DPOP_IAT_WINDOW_SECONDS of now; `ath` for the access
 * token when one is presented; the key's thumbprint equal to the one the token is bound to; the
 * nonce when one is required; and a `jti` never seen before, anywhere: its first use is recorded
 * with SET NX in Redis, which every instance of auth, the facade and the gateway shares, for as
 * long as the proof could pass the `iat` check. The `jti` is spent last, once everything else
 * holds, so a refused proof spends nothing.
 */
export class DpopVerifier {
  constructor(
    private readonly store: KeyValueStore,
    private readonly windowSeconds = DPOP_IAT_WINDOW_SECONDS,
  ) {}

  async verify(check: DpopProofCheck): Promise<VerifiedDpopProof> {
    const proof = compactProof(check.proof);
    const { payload, jwk } = await this.signedProof(proof);
    this.checkRequestClaims(payload, check);
    const jti = proofJti(payload);
    const jkt = await calculateJwkThumbprint(jwk, 'sha256');
    if (check.jkt !== undefined && jkt !== check.jkt)
      throw invalid('The DPoP proof is signed by another key than the one the token is bound to');
    checkNonce(payload, check.nonces);
    // Stryker disable next-line StringLiteral: the marker's value is never read, only its presence
    if (!(await this.store.setIfAbsent(dpopJtiKey(jkt, jti), '1', 2 * this.windowSeconds + 5)))
      throw invalid('The DPoP proof was used before (its jti): make a new proof for every request');
    return { jkt, jti };
  }

  /** The proof's claims and the public key in its header, once its signature checks out. */
  private async signedProof(proof: string): Promise<{ payload: JWTPayload; jwk: JWK }> {
    try {
      const verified = await jwtVerify(proof, EmbeddedJWK, {
        typ: DPOP_PROOF_TYPE,
        algorithms: [...DPOP_ALGORITHMS],
        requiredClaims: ['jti', 'htm', 'htu', 'iat'],
        // `iat` is checked below, both ways; an `exp` or `nbf` a client adds gets the same leeway.
        clockTolerance: this.windowSeconds,
      });
      return { payload: verified.payload, jwk: verified.protectedHeader.jwk as JWK };
    } catch (err) {
      throw invalid(
        `The DPoP proof is invalid: ${(err as Error).message} (typ must be ${DPOP_PROOF_TYPE}, alg one of ${DPOP_ALGORITHMS.join(', ')}, the public key in jwk)`,
      );
    }
  }

  /** The proof is fresh and names this request: `iat`, `htm`, `htu`, and `ath` when a token comes with it. */
  private checkRequestClaims(payload: JWTPayload, check: DpopProofCheck): void {
    const now = Math.floor(Date.now() / 1000);
    if (Math.abs(now - (payload.iat as number)) > this.windowSeconds)
      throw invalid(`The DPoP proof's iat is more than ${this.windowSeconds} s from the server's time: make a new proof for every request`);
    if (payload['htm'] !== check.method.toUpperCase()) throw invalid(`The DPoP proof's htm must be ${check.method.toUpperCase()}`);
    const htu = normalisedUrl(payload['htu']);
    const accepted = check.urls.map(normalisedUrl);
    if (!htu || !accepted.includes(htu))
      throw invalid(
        `The DPoP proof's htu must be the URL of this request${check.urls[0] ? ` (${check.urls[0]})` : ''}, without query or fragment`,
      );
    if (check.accessToken !== undefined && payload['ath'] !== accessTokenHash(check.accessToken))
      throw invalid("The DPoP proof's ath must be the base64url SHA-256 of the access token it is sent with");
  }
}

/** The DPoP header, when it holds exactly one compact JWS of a sane size. */
function compactProof(proof: string | undefined): string {
  if (proof === undefined || proof === '') throw invalid('A DPoP proof (the DPoP request header) is required');
  if (proof.length > MAX_PROOF_LENGTH || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(proof))
    throw invalid('The DPoP header must hold exactly one proof, a compact JWS');
  return proof;
}

/** The proof's `jti`, what its single use is recorded under. */
function proofJti(payload: JWTPayload): string {
  const jti = payload.jti;
  if (typeof jti !== 'string' || !jti.length || jti.length > MAX_JTI_LENGTH)
    throw invalid(`The DPoP proof's jti must be a string of 1 to ${MAX_JTI_LENGTH} characters`);
  return jti;
}

/** When a server nonce is required, the proof carries one of the nonces accepted now. */
function checkNonce(payload: JWTPayload, nonces: DpopNonces | undefined): void {
  if (nonces && !nonces.accepts(payload['nonce']))
    throw new DpopError(
      'use_dpop_nonce',
      payload['nonce'] === undefined
        ? 'A DPoP nonce is required: send the DPoP-Nonce of this answer in the proof'
        : 'The DPoP nonce has expired: use the new DPoP-Nonce',
    );
}

const invalid = (message: string) => new DpopError('invalid_dpop_proof', message);

/**
 * Server-provided nonces (RFC 9449 §8) without shared state: an HMAC of the current time window
 * under a secret every instance of the service derives from its service key, so any instance
 * accepts what another handed out. A nonce is good for the window it was made in and the next
 * (between DPOP_NONCE_PERIOD_SECONDS and twice that).
 */
export class DpopNonces {
  constructor(
    private readonly secret: string,
    private readonly periodSeconds = DPOP_NONCE_PERIOD_SECONDS,
  ) {}

  private window(now: number): number {
    return Math.floor(now / 1000 / this.periodSeconds);
  }

  private nonceOf(window: number): string {
    return createHmac('sha256', this.secret).update(`dpop-nonce:${window}`).digest('base64url').slice(0, 32);
  }

  /** The nonce to hand out now (`DPoP-Nonce`). */
  current(now = Date.now()): string {
    return this.nonceOf(this.window(now));
  }

  accepts(nonce: unknown, now = Date.now()): boolean {
    if (typeof nonce !== 'string' || nonce.length !== 32) return false;
    const window = this.window(now);
    return [window, window - 1].some((w) => timingSafeEqual(Buffer.from(nonce), Buffer.from(this.nonceOf(w))));
  }
}

/**
 * `WWW-Authenticate` for a refused DPoP request (RFC 9449 §7.1): `invalid_token` for a bound token
 * sent as Bearer (or a DPoP request with an unbound token), `invalid_dpop_proof` for a bad proof.
 */
export function dpopChallenge(error: 'invalid_token' | 'invalid_dpop_proof', description: string): string {
  return `DPoP realm="trading-api", algs="${DPOP_ALGORITHMS.join(' ')}", error="${error}", error_description="${description.replace(/["\\]/g, "'")}"`;
}

/** The key a token is bound to (`cnf.jkt`); undefined for a bearer token, null when `cnf` is malformed. */
export function confirmedKey(payload: JWTPayload): string | undefined | null {
  const cnf = payload['cnf'];
  if (cnf === undefined) return undefined;
  // Stryker disable next-line ConditionalExpression: a primitive has no jkt, so it is refused below all the same
  if (typeof cnf !== 'object' || cnf === null) return null;
  const jkt = (cnf as Record<string, unknown>)['jkt'];
  return typeof jkt === 'string' && /^[A-Za-z0-9_-]{43}$/.test(jkt) ? jkt : null;
}
