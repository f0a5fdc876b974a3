import { createPublicKey } from 'node:crypto';
import { nonPublicAddress } from '@trading/auth';
import { plainTextProblem } from '@trading/errors';
import type { Problem, Validated } from './problems';
import { isWebUrl } from './web-addresses';

/** A private_key_jwt client's public keys (RFC 7517 JWK Set). */
export interface JwkSet {
  keys: Array<Record<string, unknown>>;
}

/** Members that only a private key has (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2): never registered. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const ALG_BY_KEY: Record<string, readonly string[]> = { EC: ['ES256'], RSA: ['PS256'], OKP: ['EdDSA'] };

/** Why some member of a JWK (its name or any string in it) is not plain text, or null. */
function unsafeMember(value: unknown, path = ''): string | null {
  if (typeof value === 'string') {
    const bad = plainTextProblem(value);
    return bad ? `${path || 'the key'} ${bad}` : null;
  }
  if (typeof value !== 'object' || value === null) return null;
  for (const [name, member] of Object.entries(value)) {
    const here = Array.isArray(value) ? `${path}[${name}]` : path ? `${path}.${name}` : name;
    const bad = plainTextProblem(name) ? `a member name ${plainTextProblem(name)}` : unsafeMember(member, here);
    if (bad) return bad;
  }
  return null;
}

/** Why a JWK cannot verify client assertions, or null: a public EC P-256, RSA (≥ 2048 bits) or Ed25519 signing key. */
export function jwkProblem(jwk: unknown): string | null {
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) return 'must be a JSON Web Key (an object)';
  const k = jwk as Record<string, unknown>;
  const unsafe = unsafeMember(k);
  if (unsafe) return unsafe;
  const secret = PRIVATE_MEMBERS.filter((m) => m in k);
  if (secret.length)
    return `must be a public key: remove the private member(s) ${secret.join(', ')} (and replace this key: it has been shared)`;
  return keyTypeProblem(k) ?? keyUseProblem(k) ?? publicKeyProblem(k);
}

/** Why the key's type, curve or algorithm is not one client assertions take, or null. */
function keyTypeProblem(k: Record<string, unknown>): string | null {
  const allowed = typeof k['kty'] === 'string' ? ALG_BY_KEY[k['kty']] : undefined;
  if (!allowed) return 'kty must be EC, RSA or OKP';
  if (k['kty'] === 'EC' && k['crv'] !== 'P-256') return 'an EC key must be on crv P-256 (ES256)';
  if (k['kty'] === 'OKP' && k['crv'] !== 'Ed25519') return 'an OKP key must be crv Ed25519 (EdDSA)';
  if (k['alg'] !== undefined && !allowed.includes(k['alg'] as string)) return `alg must be ${allowed.join(' or ')} for a ${k['kty']} key`;
  return null;
}

/** Why the key's `use` or `kid` is not acceptable, or null. */
function keyUseProblem(k: Record<string, unknown>): string | null {
  if (k['use'] !== undefined && k['use'] !== 'sig') return 'use must be sig';
  if (k['kid'] !== undefined && (typeof k['kid'] !== 'string' || !k['kid'] || k['kid'].length > 200))
    return 'kid must be a string of 1 to 200 characters';
  return null;
}

/** Why the key is not a usable public key (an RSA one of at least 2048 bits), or null. */
function publicKeyProblem(k: Record<string, unknown>): string | null {
  try {
    const key = createPublicKey({ key: k as import('node:crypto').JsonWebKey, format: 'jwk' });
    if (k['kty'] === 'RSA' && (key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) return 'an RSA key must have at least 2048 bits';
  } catch {
    return 'is not a valid public key (check x, y, n, e)';
  }
  return null;
}

/** A JWK Set of 1 to 10 public signing keys, each checked by `jwkProblem` and named by item (`jwks.keys[1]`). */
export function validateJwks(input: unknown, field = 'jwks'): Validated<JwkSet> {
  if (typeof input !== 'object' || input === null || !Array.isArray((input as { keys?: unknown }).keys))
    return { ok: false, problems: [{ field, message: 'must be a JWK Set: { "keys": [ … ] }' }] };
  const keys = (input as { keys: unknown[] }).keys;
  const problems: Problem[] = [];
  if (!keys.length || keys.length > 10) problems.push({ field: `${field}.keys`, message: 'must list 1 to 10 keys' });
  keys.forEach((key, i) => {
    const bad = jwkProblem(key);
    if (bad) problems.push({ field: `${field}.keys[${i}]`, message: bad });
  });
  const kids = keys.map((k) => (k as { kid?: unknown })?.kid).filter((kid) => kid !== undefined);
  if (new Set(kids).size !== kids.length) problems.push({ field: `${field}.keys`, message: 'kid values must be unique' });
  return problems.length ? { ok: false, problems } : { ok: true, value: { keys: keys as Array<Record<string, unknown>> } };
}

/** Which jwks_uri hosts registration accepts beyond public ones. */
export interface JwksUriRules {
  /** DEV only: a jwks_uri on this machine (localhost, 127.0.0.0/8, [::1]), for a vendor's local tests. */
  allowLoopback?: boolean;
}

/**
 * Why a jwks_uri cannot be registered, or null: an https URL (no credentials, no fragment) whose
 * host is a name or a public address. Auth fetches it on the vendor's behalf, so it must never
 * name this network (loopback, private, link-local such as the cloud metadata address, …); a
 * name is checked again each time it is resolved, since its addresses can change.
 */
export function jwksUriProblem(value: unknown, rules: JwksUriRules = {}): string | null {
  const httpsOnly = 'must be an https URL (where the app publishes its JWK Set)';
  if (typeof value !== 'string' || value.length > 2000) return httpsOnly;
  const unsafe = plainTextProblem(value);
  if (unsafe) return unsafe;
  if (!isWebUrl(value) || new URL(value).protocol !== 'https:' || value.includes('#')) return httpsOnly;
  const host = new URL(value).hostname;
  const kind = /^localhost$|\.localhost$/i.test(host) ? 'loopback' : nonPublicAddress(host);
  if (!kind || kind === 'not an IP address' || (kind === 'loopback' && rules.allowLoopback)) return null;
  return `must be a public https URL: ${host} is a non-public address (${kind}), and auth fetches only from public ones`;
}
