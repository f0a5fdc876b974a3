import { createPublicKey } from 'node:crypto';
import { nonPublicAddress, SCOPES, type Scope } from '@trading/auth';
import { plainTextProblem } from '@trading/errors';
import { ISO_COUNTRY_CODES } from './countries';

/** The registration form a vendor sends by e-mail, as the document the admin CLI accepts. */
export interface Registration {
  companyName: string;
  companyWebsite: string;
  businessEmail: string;
  country: string;
  phone?: string;
  appName: string;
  description?: string;
  logoUrl: string;
  homepageUrl: string;
  supportEmail: string;
  supportUrl?: string;
  privacyPolicyUrl: string;
  termsOfServiceUrl: string;
  redirectUris: string[];
  /** Origins of the vendor's browser app allowed to call the API from a web page (CORS); none: server-side only. */
  webOrigins?: string[];
  /** "Scopes requested": API scope values (read:accounts, write:orders, …). */
  scopes: Scope[];
  /** The OAuth profile, whole: `spec` (client secret, Bearer tokens, plain authorization requests; the default) or `fapi2`. */
  profile?: OAuthProfile;
  /** How the app authenticates at the token and PAR endpoints; client_secret_basic by default (fapi2: private_key_jwt). */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
  /** private_key_jwt: the app's public keys, inline (RFC 7517 JWK Set) … */
  jwks?: JwkSet;
  /** … or where it publishes them (https). */
  jwksUri?: string;
  /** Authorization requests only by PAR (RFC 9126); default: as the profile says (fapi2 yes, spec no). */
  requirePushedAuthorizationRequests?: boolean;
  /** Access tokens only DPoP-bound (RFC 9449); default: as the profile says (fapi2 yes, spec no). */
  dpopBoundAccessTokens?: boolean;
  /** Every DPoP proof of this client must carry the server's current nonce (RFC 9449 §8); default false. */
  dpopNonceRequired?: boolean;
}

/**
 * The two OAuth profiles an environment's credentials follow, each complete. `spec`: the seed
 * spec's flow (a client secret, Bearer tokens, a plain authorization request), the default in
 * every environment, so a vendor built to the spec works from DEV to PROD. `fapi2`: the FAPI 2.0
 * Security Profile (PAR, DPoP-bound tokens, private_key_jwt with PS256, ES256 or EdDSA).
 */
const OAUTH_PROFILES = ['spec', 'fapi2'] as const;
export type OAuthProfile = (typeof OAUTH_PROFILES)[number];
/** Credentials whose flags match neither profile (set one by one, or promoted to PROD before profiles existed). */
export const LEGACY_MIX = 'legacy-mix';

/** Which profile a policy amounts to. */
export function profileOf(policy: ClientPolicy): OAuthProfile | typeof LEGACY_MIX {
  const byKey = policy.tokenEndpointAuthMethod === 'private_key_jwt';
  if (byKey && policy.requirePushedAuthorizationRequests && policy.dpopBoundAccessTokens) return 'fapi2';
  if (!byKey && !policy.requirePushedAuthorizationRequests && !policy.dpopBoundAccessTokens) return 'spec';
  return LEGACY_MIX;
}

export const TOKEN_ENDPOINT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt'] as const;
export type TokenEndpointAuthMethod = (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number];
/** Signature algorithms a client assertion may use (FAPI 2.0 allows these three only; RS256 is not among them). */
export const CLIENT_ASSERTION_ALGS = ['ES256', 'PS256', 'EdDSA'] as const;
export interface JwkSet {
  keys: Array<Record<string, unknown>>;
}

/** Per environment: how the client authenticates, and what it must do (PAR, DPoP). */
export interface ClientPolicy {
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  jwks: JwkSet | null;
  jwksUri: string | null;
  requirePushedAuthorizationRequests: boolean;
  dpopBoundAccessTokens: boolean;
  dpopNonceRequired: boolean;
}

export interface Problem {
  field: string;
  message: string;
}

export type Validated<T> = { ok: true; value: T } | { ok: false; problems: Problem[] };

type Kind = 'text' | 'url' | 'email' | 'country' | 'phone';
const FIELDS: Record<
  Exclude<keyof Registration, 'redirectUris' | 'webOrigins' | 'scopes' | 'profile' | keyof ClientPolicy>,
  { kind: Kind; required: boolean; max: number }
> = {
  companyName: { kind: 'text', required: true, max: 200 },
  companyWebsite: { kind: 'url', required: true, max: 2000 },
  businessEmail: { kind: 'email', required: true, max: 254 },
  country: { kind: 'country', required: true, max: 100 },
  phone: { kind: 'phone', required: false, max: 32 },
  appName: { kind: 'text', required: true, max: 100 },
  description: { kind: 'text', required: false, max: 1000 },
  logoUrl: { kind: 'url', required: true, max: 2000 },
  homepageUrl: { kind: 'url', required: true, max: 2000 },
  supportEmail: { kind: 'email', required: true, max: 254 },
  supportUrl: { kind: 'url', required: false, max: 2000 },
  privacyPolicyUrl: { kind: 'url', required: true, max: 2000 },
  termsOfServiceUrl: { kind: 'url', required: true, max: 2000 },
};
const POLICY_FIELDS = [
  'profile',
  'dpopNonceRequired',
  'tokenEndpointAuthMethod',
  'jwks',
  'jwksUri',
  'requirePushedAuthorizationRequests',
  'dpopBoundAccessTokens',
] as const;
const KNOWN = new Set<string>([...Object.keys(FIELDS), 'redirectUris', 'webOrigins', 'scopes', ...POLICY_FIELDS]);

const EMAIL = /^[^\s@"<>(),;:\\[\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;
const PHONE = /^\+?[0-9][0-9 ()./-]{4,30}$/;

/** An absolute http(s) URL with a host (websites, policies, logos). */
function isWebUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'https:' || u.protocol === 'http:') && !!u.hostname && !u.username && !u.password && !/\s/.test(value);
  } catch {
    return false;
  }
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Why a redirect URI cannot be registered, or null when it can (RFC 6749 §3.1.2, RFC 9700
 * §2.1, §4.1): absolute, no fragment, no credentials, no wildcards, and https unless it points
 * at the user's own machine (loopback http, as native and local apps use).
 */
export function redirectUriProblem(value: unknown): string | null {
  if (typeof value !== 'string' || !value.trim()) return 'must be a URL';
  if (value.length > 2000) return 'must be at most 2000 characters';
  const unsafe = plainTextProblem(value);
  if (unsafe) return unsafe;
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (/\s/.test(value)) return 'must not contain spaces';
  if (value.includes('#')) return 'must not contain a fragment (#)';
  if (value.includes('*')) return 'must not contain wildcards; register each URL exactly';
  if (u.username || u.password) return 'must not contain credentials';
  if (u.protocol === 'http:' && !LOOPBACK.has(u.hostname)) return 'must use https (plain http only for localhost / 127.0.0.1 / [::1])';
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return 'must be an https URL';
  return null;
}

/**
 * Why a web origin cannot be registered for CORS, or null when it can: the redirect URI rules
 * (https unless loopback, no credentials, no wildcards), and an origin only — scheme, host and
 * port exactly as a browser sends them in `Origin` (no path, query or fragment, no trailing
 * slash, lower case, no default port), since the facade compares the header byte for byte.
 */
export function webOriginProblem(value: unknown): string | null {
  if (value === '*' || value === 'null') return 'must be one exact origin (scheme://host[:port]); * and null are not accepted';
  const bad = redirectUriProblem(value);
  if (bad) return bad;
  const text = value as string;
  const u = new URL(text);
  if (u.pathname !== '/' || u.search || text.includes('?')) return 'must be an origin only (scheme://host[:port]), without a path or query';
  if (u.origin !== text) return `must be written as browsers send it in Origin: ${u.origin}`;
  return null;
}

/**
 * A list of web origins (registration, promotion): optional, at most 20, each checked by
 * `webOriginProblem` and named by item (`webOrigins[1]`).
 */
export function validateWebOrigins(origins: unknown, field = 'webOrigins'): Validated<string[]> {
  if (origins === undefined || origins === null) return { ok: true, value: [] };
  if (!Array.isArray(origins))
    return { ok: false, problems: [{ field, message: 'must be a list of origins, e.g. ["https://app.example"]' }] };
  const problems: Problem[] = [];
  origins.forEach((origin, i) => {
    const bad = webOriginProblem(origin);
    if (bad) problems.push({ field: `${field}[${i}]`, message: bad });
    else if (origins.indexOf(origin) !== i) problems.push({ field: `${field}[${i}]`, message: 'is listed twice' });
  });
  if (origins.length > 20) problems.push({ field, message: 'must list at most 20 origins' });
  return problems.length ? { ok: false, problems } : { ok: true, value: origins as string[] };
}

/**
 * Validates a registration document field by field. Every problem is reported (by field name,
 * `redirectUris[1]` for list items), so the service team can send the vendor one complete list.
 */
export function validateRegistration(input: unknown, rules: JwksUriRules = {}): Validated<Registration> {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return { ok: false, problems: [{ field: '(document)', message: 'must be a JSON object' }] };
  const doc = input as Record<string, unknown>;
  const problems: Problem[] = [];
  const out: Record<string, unknown> = {};
  const problem = (field: string, message: string) => problems.push({ field, message });

  for (const key of Object.keys(doc)) if (!KNOWN.has(key)) problem(key, 'is not a field of the registration form');

  for (const [name, rule] of Object.entries(FIELDS)) {
    const checked = fieldValue(rule, doc[name]);
    if (checked && 'problem' in checked) problem(name, checked.problem);
    else if (checked) out[name] = checked.value;
  }
  registrationRedirectUris(doc['redirectUris'], problem, out);

  const origins = validateWebOrigins(doc['webOrigins']);
  if (origins.ok) out['webOrigins'] = origins.value;
  else problems.push(...origins.problems);

  const policy = validateClientPolicy(doc, 'DEV', rules);
  if (policy.ok) Object.assign(out, policy.value);
  else problems.push(...policy.problems);

  registrationScopes(doc['scopes'], problem, out);
  return problems.length ? { ok: false, problems } : { ok: true, value: out as unknown as Registration };
}

type FieldRule = (typeof FIELDS)[keyof typeof FIELDS];
type ProblemSink = (field: string, message: string) => void;

/** One text field of the form: its value (trimmed; an e-mail address in lower case), why it is refused, or null when absent and optional. */
function fieldValue(rule: FieldRule, raw: unknown): { value: string } | { problem: string } | null {
  if (raw === undefined || raw === null || (typeof raw === 'string' && !raw.trim()))
    return rule.required ? { problem: 'is required' } : null;
  if (typeof raw !== 'string') return { problem: 'must be a string' };
  // Vendors' text is shown to users and operators: no character may steer a terminal or reorder what is shown.
  const unsafe = plainTextProblem(raw);
  if (unsafe) return { problem: unsafe };
  const value = raw.trim();
  if (value.length > rule.max) return { problem: `must be at most ${rule.max} characters` };
  const bad = kindProblem(rule.kind, value);
  if (bad) return { problem: bad };
  return { value: rule.kind === 'email' ? value.toLowerCase() : value };
}

/** Why a trimmed value is not of its field's kind (URL, e-mail address, country code, phone number), or null. */
function kindProblem(kind: Kind, value: string): string | null {
  return kind === 'url' && !isWebUrl(value)
    ? 'must be an http(s) URL'
    : kind === 'email' && !EMAIL.test(value)
      ? 'must be an e-mail address'
      : kind === 'country' && !ISO_COUNTRY_CODES.has(value)
        ? 'must be a 2-letter ISO 3166-1 country code in capitals, e.g. DE or US'
        : kind === 'phone' && !PHONE.test(value)
          ? 'must be a phone number (digits, spaces, + ( ) . / -)'
          : null;
}

/** The registration's redirect URIs: one to 20, each checked and named by item (`redirectUris[1]`). */
function registrationRedirectUris(uris: unknown, problem: ProblemSink, out: Record<string, unknown>): void {
  if (!Array.isArray(uris) || !uris.length) return void problem('redirectUris', 'must be a list of one or more callback URLs');
  uris.forEach((uri, i) => {
    const bad = redirectUriProblem(uri);
    if (bad) problem(`redirectUris[${i}]`, bad);
    else if (uris.indexOf(uri) !== i) problem(`redirectUris[${i}]`, 'is listed twice');
  });
  if (uris.length > 20) problem('redirectUris', 'must list at most 20 URLs');
  out['redirectUris'] = uris;
}

/** The scopes requested: one or more API scope values, each named by item (`scopes[1]`). */
function registrationScopes(scopes: unknown, problem: ProblemSink, out: Record<string, unknown>): void {
  if (!Array.isArray(scopes) || !scopes.length) return void problem('scopes', `must be a list of one or more of ${SCOPES.join(', ')}`);
  scopes.forEach((scope, i) => {
    if (typeof scope !== 'string' || !(SCOPES as readonly string[]).includes(scope))
      problem(`scopes[${i}]`, `must be one of ${SCOPES.join(', ')}`);
    else if (scopes.indexOf(scope) !== i) problem(`scopes[${i}]`, 'is listed twice');
  });
  out['scopes'] = scopes;
}

/** The pages users see on the consent screen: https outside DEV (a plain-http page there could be swapped in transit). */
const PUBLIC_PAGE_FIELDS = ['logoUrl', 'privacyPolicyUrl', 'termsOfServiceUrl'] as const;
export type PublicPageField = (typeof PUBLIC_PAGE_FIELDS)[number];

/**
 * The public pages an app leaving DEV will show: the registered ones, replaced by any given
 * with the promotion; each must be an https URL.
 */
export function validatePublicPages(
  registered: Record<PublicPageField, string>,
  replacements: unknown,
): Validated<Record<PublicPageField, string>> {
  const given =
    replacements && typeof replacements === 'object' && !Array.isArray(replacements) ? (replacements as Record<string, unknown>) : {};
  const problems: Problem[] = [];
  const out = { ...registered };
  for (const key of Object.keys(given))
    if (!(PUBLIC_PAGE_FIELDS as readonly string[]).includes(key))
      problems.push({ field: key, message: `is not one of ${PUBLIC_PAGE_FIELDS.join(', ')}` });
  for (const field of PUBLIC_PAGE_FIELDS) {
    const value = given[field] ?? registered[field];
    const unsafe = typeof value === 'string' ? plainTextProblem(value) : null;
    if (unsafe) problems.push({ field, message: unsafe });
    else if (typeof value !== 'string' || !isWebUrl(value.trim()) || value.length > 2000)
      problems.push({ field, message: 'must be an http(s) URL' });
    else if (new URL(value.trim()).protocol !== 'https:')
      problems.push({
        field,
        message: `must be an https URL outside DEV (give one with the promotion: --${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)})`,
      });
    else out[field] = value.trim();
  }
  return problems.length ? { ok: false, problems } : { ok: true, value: out };
}

/** Redirect URIs for a promotion (each environment has its own): the same rules, field `redirectUris`. */
export function validateRedirectUris(uris: unknown): Validated<string[]> {
  const problems: Problem[] = [];
  if (!Array.isArray(uris) || !uris.length)
    return { ok: false, problems: [{ field: 'redirectUris', message: 'must be a list of one or more callback URLs' }] };
  uris.forEach((uri, i) => {
    const bad = redirectUriProblem(uri);
    if (bad) problems.push({ field: `redirectUris[${i}]`, message: bad });
    else if (uris.indexOf(uri) !== i) problems.push({ field: `redirectUris[${i}]`, message: 'is listed twice' });
  });
  return problems.length ? { ok: false, problems } : { ok: true, value: uris as string[] };
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

/**
 * The client-authentication fields and policy of one environment (registration: DEV; promotion:
 * the environment promoted to), the same in every environment: `profile` sets them all (spec by
 * default), and a flag given beside a profile must agree with it. Flags given without a profile
 * are taken as they are (the result may be a legacy mix, which `apps list` warns about).
 */
export function validateClientPolicy(
  input: Record<string, unknown>,
  _environment: 'DEV' | 'UAT' | 'PROD',
  rules: JwksUriRules = {},
): Validated<ClientPolicy> {
  const problems: Problem[] = [];
  const profile = input['profile'];
  if (profile !== undefined && profile !== null && !(OAUTH_PROFILES as readonly unknown[]).includes(profile))
    problems.push({ field: 'profile', message: `must be one of ${OAUTH_PROFILES.join(', ')}` });
  const fapi2 = profile === 'fapi2';
  const method = input['tokenEndpointAuthMethod'] ?? (fapi2 ? 'private_key_jwt' : 'client_secret_basic');
  const methodProblem = authMethodProblem(method, profile);
  if (methodProblem) problems.push(methodProblem);
  const { jwks, jwksUri } = clientKeys(input, method, rules, problems);
  const flag = (name: PolicyFlag, byProfile: boolean) => policyFlag(input, profile, name, byProfile, problems);
  const requirePushedAuthorizationRequests = flag('requirePushedAuthorizationRequests', fapi2);
  const dpopBoundAccessTokens = flag('dpopBoundAccessTokens', fapi2);
  const dpopNonceRequired = flag('dpopNonceRequired', false);
  if (problems.length) return { ok: false, problems };
  return {
    ok: true,
    value: {
      tokenEndpointAuthMethod: method as TokenEndpointAuthMethod,
      jwks,
      jwksUri,
      requirePushedAuthorizationRequests,
      dpopBoundAccessTokens,
      dpopNonceRequired,
    },
  };
}

/** Why the token endpoint's authentication method is unknown, or not the profile's, or null. */
function authMethodProblem(method: unknown, profile: unknown): Problem | null {
  if (!(TOKEN_ENDPOINT_AUTH_METHODS as readonly unknown[]).includes(method))
    return { field: 'tokenEndpointAuthMethod', message: `must be one of ${TOKEN_ENDPOINT_AUTH_METHODS.join(', ')}` };
  if (profile === 'fapi2' && method !== 'private_key_jwt')
    return {
      field: 'tokenEndpointAuthMethod',
      message: 'must be private_key_jwt in the fapi2 profile (a client secret is refused there)',
    };
  if (profile === 'spec' && method === 'private_key_jwt')
    return {
      field: 'tokenEndpointAuthMethod',
      message: 'must be client_secret_basic or client_secret_post in the spec profile (choose fapi2 for private_key_jwt)',
    };
  return null;
}

/** The client's public keys, inline (jwks) or by address (jwksUri), one or the other; private_key_jwt needs one of them. */
function clientKeys(
  input: Record<string, unknown>,
  method: unknown,
  rules: JwksUriRules,
  problems: Problem[],
): { jwks: JwkSet | null; jwksUri: string | null } {
  let jwks: JwkSet | null = null;
  if (input['jwks'] !== undefined && input['jwks'] !== null) {
    const checked = validateJwks(input['jwks']);
    if (checked.ok) jwks = checked.value;
    else problems.push(...checked.problems);
  }
  let jwksUri: string | null = null;
  const uri = input['jwksUri'];
  if (uri !== undefined && uri !== null) {
    const bad = jwksUriProblem(uri, rules);
    if (bad) problems.push({ field: 'jwksUri', message: bad });
    else jwksUri = uri as string;
  }
  if (input['jwks'] != null && uri != null) problems.push({ field: 'jwksUri', message: 'give jwks or jwksUri, not both' });
  if (method === 'private_key_jwt' && input['jwks'] == null && uri == null)
    problems.push({ field: 'jwks', message: 'private_key_jwt needs the public keys: jwks (inline) or jwksUri' });
  return { jwks, jwksUri };
}

type PolicyFlag = 'requirePushedAuthorizationRequests' | 'dpopBoundAccessTokens' | 'dpopNonceRequired';

/** A flag as given (true or false), or as the profile sets it; given beside a profile, it must agree (the nonce flag is free). */
function policyFlag(input: Record<string, unknown>, profile: unknown, name: PolicyFlag, byProfile: boolean, problems: Problem[]): boolean {
  const value = input[name];
  if (value === undefined || value === null) return byProfile;
  if (typeof value !== 'boolean') problems.push({ field: name, message: 'must be true or false' });
  else if (profile !== undefined && name !== 'dpopNonceRequired' && value !== byProfile)
    problems.push({ field: name, message: `is ${byProfile} in the ${String(profile)} profile` });
  return value === true;
}
