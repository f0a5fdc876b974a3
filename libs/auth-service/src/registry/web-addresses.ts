import { plainTextProblem } from '@trading/errors';
import type { Problem, Validated } from './problems';

/** An absolute http(s) URL with a host (websites, policies, logos). */
export function isWebUrl(value: string): boolean {
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
