/**
 * The OAuth client side of the sample vendor app, one small function per step, each with the RFC
 * it follows. Plain mode uses PKCE, state and a client secret; the "FAPI 2.0" mode adds a pushed
 * authorization request (PAR), private_key_jwt client authentication, DPoP-bound tokens and an
 * OpenID Connect ID token. jose signs and verifies the JWTs; everything else is plain fetch.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import {
  calculateJwkThumbprint,
  createRemoteJWKSet,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
  SignJWT,
  type JWK,
  type JWTPayload,
  type KeyLike,
} from 'jose';

const base64url = (bytes: Buffer) => bytes.toString('base64url');

/** RFC 7636 §4.1–4.2: a random verifier (43–128 characters) and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = base64url(randomBytes(48)); // 64 characters of [A-Za-z0-9_-]
  return { verifier, challenge: base64url(createHash('sha256').update(verifier).digest()) };
}

/** A random value for `state` (RFC 6749 §10.12) or `nonce` (OpenID Connect Core §3.1.2.1). */
export const randomValue = () => base64url(randomBytes(24));

/** What the app reads from OpenID Connect Discovery / RFC 8414 metadata. */
export interface ServerMetadata {
  issuer: string;
  token_endpoint: string;
  revocation_endpoint: string;
  pushed_authorization_request_endpoint: string;
  jwks_uri: string;
}

/** RFC 8414 §3 / OpenID Connect Discovery §4: `{login_url}/.well-known/openid-configuration`. */
export async function discover(loginUrl: string): Promise<ServerMetadata> {
  const res = await fetch(`${loginUrl}/.well-known/openid-configuration`);
  if (!res.ok) throw new Error(`discovery answered ${res.status}`);
  return (await res.json()) as ServerMetadata;
}

// ---------------------------------------------------------------------------------------------
// Client authentication: a secret (RFC 6749 §2.3.1), or a signed assertion (RFC 7523, private_key_jwt)
// ---------------------------------------------------------------------------------------------

/** The app's own signing key for private_key_jwt: the private key stays here, the public JWK is registered. */
export interface ClientKey {
  privateKey: KeyLike;
  /** The public key as registered (`apps promote --jwks-file`): kty, crv, x, y, kid, alg, use. */
  publicJwk: JWK;
}

/**
 * Reads the app's ES256 key pair from `file` (a private JWK), or makes one and writes it there
 * (mode 0600) the first time, so the JWKS the operator registered stays valid across restarts.
 */
export async function loadOrCreateClientKey(file: string): Promise<ClientKey> {
  let privateJwk: JWK;
  if (existsSync(file)) privateJwk = JSON.parse(readFileSync(file, 'utf8')) as JWK;
  else {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    privateJwk = { ...(await exportJWK(privateKey)), alg: 'ES256', use: 'sig' };
    privateJwk.kid = await calculateJwkThumbprint(privateJwk); // RFC 7638: a kid derived from the key
    writeFileSync(file, JSON.stringify(privateJwk, null, 2) + '\n', { mode: 0o600 });
  }
  const { d: _private, ...publicJwk } = privateJwk; // never publish `d`
  return { privateKey: (await importJWK(privateJwk, 'ES256')) as KeyLike, publicJwk };
}

export type ClientAuth =
  | { method: 'client_secret_post'; clientId: string; clientSecret: string }
  | { method: 'private_key_jwt'; clientId: string; key: ClientKey; audience: string };

/**
 * The parameters that authenticate the app at the token, PAR and revocation endpoints.
 * RFC 7523 §2.2 / §3: iss = sub = client_id, aud = the issuer, a short exp and a jti used once.
 */
async function clientAuthParams(auth: ClientAuth): Promise<Record<string, string>> {
  if (auth.method === 'client_secret_post') return { client_id: auth.clientId, client_secret: auth.clientSecret };
  const assertion = await new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: auth.key.publicJwk.kid!, typ: 'JWT' })
    .setIssuer(auth.clientId)
    .setSubject(auth.clientId)
    .setAudience(auth.audience)
    .setJti(randomUUID())
    .setIssuedAt()
    .setExpirationTime('60s')
    .sign(auth.key.privateKey);
  return {
    client_id: auth.clientId,
    client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
    client_assertion: assertion,
  };
}

// ---------------------------------------------------------------------------------------------
// DPoP (RFC 9449): a key per visitor session, a fresh proof for every request
// ---------------------------------------------------------------------------------------------

export class DpopKey {
  /** The latest `DPoP-Nonce` each server sent (RFC 9449 §8 and §9), by origin. */
  private readonly nonces = new Map<string, string>();
  /** How many requests were sent again with a server's new nonce (use_dpop_nonce). */
  nonceRetries = 0;

  private constructor(
    private readonly privateKey: KeyLike,
    private readonly jwk: JWK,
    /** RFC 7638 thumbprint: the access token's `cnf.jkt`. */
    readonly thumbprint: string,
  ) {}

  static async generate(): Promise<DpopKey> {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = await exportJWK(publicKey);
    return new DpopKey(privateKey, jwk, await calculateJwkThumbprint(jwk));
  }

  /**
   * RFC 9449 §4.2: header typ dpop+jwt with the public jwk; claims htm, htu (the URL without query
   * or fragment), iat, a unique jti, the server's nonce if it gave one, and ath (the access
   * token's SHA-256) when a token goes with the request.
   */
  proof(method: string, url: string, accessToken?: string): Promise<string> {
    const target = new URL(url);
    const htu = `${target.origin}${target.pathname}`;
    const nonce = this.nonces.get(target.origin);
    const ath = accessToken ? base64url(createHash('sha256').update(accessToken).digest()) : undefined;
    return new SignJWT({ htm: method.toUpperCase(), htu, ...(nonce ? { nonce } : {}), ...(ath ? { ath } : {}) })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: this.jwk })
      .setJti(randomUUID())
      .setIssuedAt()
      .sign(this.privateKey);
  }

  /** Keeps the nonce an answer carries; true when it is a new one (worth a retry after use_dpop_nonce). */
  remember(url: string, response: Response): boolean {
    const nonce = response.headers.get('dpop-nonce');
    const origin = new URL(url).origin;
    if (!nonce || this.nonces.get(origin) === nonce) return false;
    this.nonces.set(origin, nonce);
    return true;
  }
}

/** RFC 9449 §8 (token endpoint: 400 use_dpop_nonce) and §9 (resource server: 401 with WWW-Authenticate). */
export async function asksForNonce(response: Response): Promise<boolean> {
  if (response.status === 401) return /error="use_dpop_nonce"/.test(response.headers.get('www-authenticate') ?? '');
  if (response.status !== 400) return false;
  const body = (await response
    .clone()
    .json()
    .catch(() => ({}))) as { error?: string };
  return body.error === 'use_dpop_nonce';
}

/**
 * POST a form (RFC 6749 §4.1.3, RFC 9126 §2.1, RFC 7009 §2.1) with the client's credentials, and a
 * DPoP proof when the session has a key: sent again once with the server's nonce if it asks.
 */
export async function postForm(
  url: string,
  params: Record<string, string>,
  auth: ClientAuth,
  dpop?: DpopKey,
): Promise<{ status: number; body: Record<string, any> }> {
  for (let attempt = 0; ; attempt++) {
    // A new assertion (new jti) and a new proof for every attempt: each is good only once.
    const body = new URLSearchParams({ ...params, ...(await clientAuthParams(auth)) });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (dpop) headers['dpop'] = await dpop.proof('POST', url);
    const response = await fetch(url, { method: 'POST', headers, body });
    const fresh = dpop?.remember(url, response) ?? false;
    if (attempt === 0 && fresh && (await asksForNonce(response))) {
      dpop!.nonceRetries++;
      continue;
    }
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Record<string, any>) : {} };
  }
}

/**
 * OpenID Connect Core §3.1.3.7: the ID token's signature (the server's JWKS), iss, aud = our
 * client_id, exp, and the nonce we sent with this very authorization request.
 */
export async function verifyIdToken(
  idToken: string,
  metadata: ServerMetadata,
  clientId: string,
  nonce: string,
): Promise<JWTPayload & { name?: string; email?: string }> {
  const jwks = createRemoteJWKSet(new URL(metadata.jwks_uri));
  const { payload } = await jwtVerify(idToken, jwks, { issuer: metadata.issuer, audience: clientId, algorithms: ['ES256'] });
  if (payload['nonce'] !== nonce) throw new Error('the ID token does not carry the nonce of this sign-in');
  return payload;
}
