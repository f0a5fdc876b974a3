import { isIpOrCidr } from '@trading/auth';
import type { NewPat } from '../pat/pat.service';

/** The create-token form as submitted, echoed back into the form when the server refuses it. */
export interface TokenFormValues {
  name: string;
  expires: string;
  scope: string;
  ips: string;
  /** The accounts ticked; none: every account of the user's. */
  accounts: string[];
}

export const TOKEN_FIELDS = ['name', 'expires', 'scope', 'ips', 'accounts'] as const;
export type TokenField = (typeof TOKEN_FIELDS)[number];

export function readTokenForm(body: Record<string, unknown>): TokenFormValues {
  const text = (v: unknown, max: number) => (typeof v === 'string' ? v.slice(0, max) : '');
  return {
    name: text(body['name'], 200),
    expires: text(body['expires'], 20),
    scope: text(body['scope'], 20),
    ips: text(body['ips'], 4000),
    accounts: (Array.isArray(body['accounts']) ? body['accounts'] : [body['accounts']])
      .filter((v): v is string => typeof v === 'string')
      .slice(0, 100),
  };
}

/** The service validates (and names the field at fault); the form only splits the IP list. */
export function toNewPat(userId: string, form: TokenFormValues): NewPat {
  return {
    userId,
    name: form.name,
    access: form.scope,
    expires: form.expires.trim(),
    ipAllowlist: form.ips.split(/[\s,]+/).filter(Boolean),
    accountIds: form.accounts,
  };
}

/** Today and one year from today (UTC), the bounds of a PAT's expiry date. */
export function expiryBounds(now = new Date()): { min: string; max: string } {
  const day = (y: number) => new Date(Date.UTC(y, now.getUTCMonth(), now.getUTCDate())).toISOString().slice(0, 10);
  return { min: day(now.getUTCFullYear()), max: day(now.getUTCFullYear() + 1) };
}

const MAX_NAME = 100;

/**
 * The form's rules, checked before the service is called so each refusal is a sentence in the
 * person's language (the service checks the same rules again and names the field, for the API).
 */
export function checkTokenForm(
  form: TokenFormValues,
  t: {
    nameMissing: string;
    nameTooLong: (max: number) => string;
    scopeMissing: string;
    ipInvalid: (value: string) => string;
    dateFormat: string;
    dateUnknown: (value: string) => string;
    datePast: string;
    dateTooFar: (max: string) => string;
  },
  now = new Date(),
): Partial<Record<TokenField, string>> {
  const errors: Partial<Record<TokenField, string>> = {};
  const name = form.name.trim();
  if (!name) errors.name = t.nameMissing;
  else if (name.length > MAX_NAME) errors.name = t.nameTooLong(MAX_NAME);
  if (form.scope !== 'READ_ONLY' && form.scope !== 'READ_WRITE') errors.scope = t.scopeMissing;
  const badIp = form.ips
    .split(/[\s,]+/)
    .filter(Boolean)
    .find((entry) => !isIpOrCidr(entry));
  if (badIp !== undefined) errors.ips = t.ipInvalid(badIp.slice(0, 60));
  const date = form.expires.trim();
  const { min, max } = expiryBounds(now);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) errors.expires = t.dateFormat;
  else if (Number.isNaN(Date.parse(`${date}T00:00:00Z`)) || new Date(`${date}T00:00:00Z`).toISOString().slice(0, 10) !== date)
    errors.expires = t.dateUnknown(date);
  else if (date < min) errors.expires = t.datePast;
  else if (date > max) errors.expires = t.dateTooFar(max);
  return errors;
}
