import { SCOPES, type Scope } from '@trading/auth';

/**
 * OpenID Connect Core §5.4 scopes: sign-in and profile claims only. They grant no API
 * access: access tokens carry the API scopes alone (the edges and the internal trust ceilings know
 * nothing else), the grant and the token response keep them all. Any app may ask for them; the
 * user sees what each shares on the consent page.
 */
export const OIDC_SCOPES = ['openid', 'profile', 'email'] as const;
export type OidcScope = (typeof OIDC_SCOPES)[number];
/** What an authorization request, a grant and a token response may name. */
export type GrantScope = OidcScope | Scope;
const ALL: readonly GrantScope[] = [...OIDC_SCOPES, ...SCOPES];

export const isOidcScope = (value: string): value is OidcScope => (OIDC_SCOPES as readonly string[]).includes(value);

/**
 * Scopes as a client sends them: the documented `scopes` is comma-separated, RFC 6749 `scope`
 * space-separated; either is accepted. Returns the values in canonical order, or the first
 * value that is neither an API scope (SCOPES) nor an OpenID Connect one.
 */
export function parseScopes(raw: string): { scopes: GrantScope[] } | { unknown: string } {
  const values = raw.split(/[\s,]+/).filter(Boolean);
  const unknown = values.find((v) => !(ALL as readonly string[]).includes(v));
  if (unknown !== undefined) return { unknown };
  return { scopes: ALL.filter((s) => values.includes(s)) };
}

export const scopeString = (scopes: readonly string[]) => ALL.filter((s) => scopes.includes(s)).join(' ');

/** The API scopes among them: what an access token carries. */
export const apiScopes = (scopes: readonly string[]): Scope[] => SCOPES.filter((s) => scopes.includes(s));
