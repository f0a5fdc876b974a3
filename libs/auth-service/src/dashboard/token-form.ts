import type { NewPat } from '../pat/pat.service';

/** The create-token form as submitted, echoed back into the form when the server refuses it. */
export interface TokenFormValues {
  name: string;
  expires: string;
  scope: string;
  ips: string;
}

export const TOKEN_FIELDS = ['name', 'expires', 'scope', 'ips'] as const;
export type TokenField = (typeof TOKEN_FIELDS)[number];

export function readTokenForm(body: Record<string, unknown>): TokenFormValues {
  const text = (v: unknown, max: number) => (typeof v === 'string' ? v.slice(0, max) : '');
  return {
    name: text(body['name'], 200),
    expires: text(body['expires'], 20),
    scope: text(body['scope'], 20),
    ips: text(body['ips'], 4000),
  };
}

/** The service validates (and names the field at fault); the form only splits the IP list. */
export function toNewPat(userId: string, form: TokenFormValues): NewPat {
  return { userId, name: form.name, access: form.scope, expires: form.expires, ipAllowlist: form.ips.split(/[\s,]+/).filter(Boolean) };
}

/** Today and one year from today (UTC), the bounds of the expiry date (spec §2.5). */
export function expiryBounds(now = new Date()): { min: string; max: string } {
  const day = (y: number) => new Date(Date.UTC(y, now.getUTCMonth(), now.getUTCDate())).toISOString().slice(0, 10);
  return { min: day(now.getUTCFullYear()), max: day(now.getUTCFullYear() + 1) };
}
