/** The API scopes an app may be approved for and a token may carry. */
export const SCOPES = [
  'read:accounts',
  'write:accounts',
  'read:orders',
  'write:orders',
  'read:banking',
  'write:banking',
  'read:market',
] as const;

/** What each scope lets an app do, in a line (the OpenAPI document's OAuth flow lists them). */
export const SCOPE_DESCRIPTIONS: Record<(typeof SCOPES)[number], string> = {
  'read:accounts': 'See accounts, positions, margin and portfolios',
  'write:accounts': 'Manage account settings (PAT revocation)',
  'read:orders': 'See order rules, orders, trades and live order events; preview orders',
  'write:orders': 'Place and cancel orders',
  'read:banking': 'See cash balances and activity',
  'write:banking': 'Deposit, withdraw and cancel transfers',
  'read:market': 'See market data: quotes, price bars, the market clock and calendar, instruments and live prices',
};
export type Scope = (typeof SCOPES)[number];

/**
 * Scopes any registered app may ask for without being approved for them: market data is the
 * same for everyone and no account's (a token still needs the user's consent to it, and is
 * rate limited like any other).
 */
export const UNRESTRICTED_SCOPES: readonly Scope[] = ['read:market'];

const READ_SCOPES: Scope[] = SCOPES.filter((s) => s.startsWith('read:'));

/** A PAT's access scope. */
export const PAT_ACCESS = ['READ_ONLY', 'READ_WRITE'] as const;
export type PatAccess = (typeof PAT_ACCESS)[number];

/** READ_ONLY carries the read:* scopes (read:market among them), READ_WRITE all of them. */
export function scopesForPatAccess(access: PatAccess): Scope[] {
  return access === 'READ_WRITE' ? [...SCOPES] : [...READ_SCOPES];
}

export function missingScopes(granted: readonly string[], required: readonly string[]): string[] {
  return required.filter((s) => !granted.includes(s));
}

/** READ_ONLY tokens may only use safe methods. */
const READ_ONLY_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
export function methodAllowedFor(access: PatAccess | undefined, method: string): boolean {
  return access !== 'READ_ONLY' || READ_ONLY_METHODS.has(method.toUpperCase());
}
