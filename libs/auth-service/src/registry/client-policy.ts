import type { Problem, Validated } from './problems';
import { jwksUriProblem, validateJwks, type JwkSet, type JwksUriRules } from './jwks';

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

/** Per environment: how the client authenticates, and what it must do (PAR, DPoP). */
export interface ClientPolicy {
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  jwks: JwkSet | null;
  jwksUri: string | null;
  requirePushedAuthorizationRequests: boolean;
  dpopBoundAccessTokens: boolean;
  dpopNonceRequired: boolean;
  /** Consenting to the app needs a second factor in the session; a user without one cannot connect it. */
  requireSecondFactor: boolean;
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
  /** The second-factor rule when the input leaves it out (a promotion to PROD of a trading app: on). */
  requireSecondFactorByDefault = false,
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
  const requireSecondFactor = flag('requireSecondFactor', requireSecondFactorByDefault);
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
      requireSecondFactor,
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

type PolicyFlag = 'requirePushedAuthorizationRequests' | 'dpopBoundAccessTokens' | 'dpopNonceRequired' | 'requireSecondFactor';

/** A flag as given (true or false), or as the profile sets it; given beside a profile, it must agree (the nonce and second-factor flags are free). */
function policyFlag(input: Record<string, unknown>, profile: unknown, name: PolicyFlag, byProfile: boolean, problems: Problem[]): boolean {
  const value = input[name];
  if (value === undefined || value === null) return byProfile;
  if (typeof value !== 'boolean') problems.push({ field: name, message: 'must be true or false' });
  else if (profile !== undefined && name !== 'dpopNonceRequired' && name !== 'requireSecondFactor' && value !== byProfile)
    problems.push({ field: name, message: `is ${byProfile} in the ${String(profile)} profile` });
  return value === true;
}
