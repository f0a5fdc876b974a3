/** Spec §2.2. */
export const SCOPES = ['read:accounts', 'write:accounts', 'read:orders', 'write:orders', 'read:banking', 'write:banking'] as const;
export type Scope = (typeof SCOPES)[number];

export const READ_SCOPES: Scope[] = SCOPES.filter((s) => s.startsWith('read:'));

/** Spec §2.5/§5.2: a PAT's access scope. */
export const PAT_ACCESS = ['READ_ONLY', 'READ_WRITE'] as const;
export type PatAccess = (typeof PAT_ACCESS)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** DESIGN §4: READ_ONLY carries the read:* scopes, READ_WRITE all six. */
export function scopesForPatAccess(access: PatAccess): Scope[] {
  return access === 'READ_WRITE' ? [...SCOPES] : [...READ_SCOPES];
}

export function missingScopes(granted: readonly string[], required: readonly string[]): string[] {
  return required.filter((s) => !granted.includes(s));
}

/** Spec §5.2 step 4: READ_ONLY tokens may only use safe methods. */
const READ_ONLY_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
export function methodAllowedFor(access: PatAccess | undefined, method: string): boolean {
  return access !== 'READ_ONLY' || READ_ONLY_METHODS.has(method.toUpperCase());
}
