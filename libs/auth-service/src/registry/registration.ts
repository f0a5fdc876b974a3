import { SCOPES, type Scope } from '@trading/auth';
import { plainTextProblem } from '@trading/errors';
import { validateClientPolicy, type ClientPolicy, type OAuthProfile, type TokenEndpointAuthMethod } from './client-policy';
import { ISO_COUNTRY_CODES } from './countries';
import type { JwkSet, JwksUriRules } from './jwks';
import type { Problem, Validated } from './problems';
import { isWebUrl, redirectUriProblem, validateWebOrigins } from './web-addresses';

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
  /** Consenting to the app needs a second factor in the session; default false. */
  requireSecondFactor?: boolean;
}

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
  'requireSecondFactor',
  'tokenEndpointAuthMethod',
  'jwks',
  'jwksUri',
  'requirePushedAuthorizationRequests',
  'dpopBoundAccessTokens',
] as const;
const KNOWN = new Set<string>([...Object.keys(FIELDS), 'redirectUris', 'webOrigins', 'scopes', ...POLICY_FIELDS]);

const EMAIL = /^[^\s@"<>(),;:\\[\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;
const PHONE = /^\+?[0-9][0-9 ()./-]{4,30}$/;

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
