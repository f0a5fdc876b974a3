import { SCOPES, type Scope } from '@trading/auth';

/**
 * Scopes as a client sends them: spec §5.1 `scopes` is comma-separated, RFC 6749 `scope`
 * space-separated; either is accepted. Returns the values in canonical order, or the first
 * value that is not a scope of spec §2.2.
 */
export function parseScopes(raw: string): { scopes: Scope[] } | { unknown: string } {
  const values = raw.split(/[\s,]+/).filter(Boolean);
  const unknown = values.find((v) => !(SCOPES as readonly string[]).includes(v));
  if (unknown !== undefined) return { unknown };
  return { scopes: SCOPES.filter((s) => values.includes(s)) };
}

export const scopeString = (scopes: readonly string[]) => SCOPES.filter((s) => scopes.includes(s)).join(' ');
