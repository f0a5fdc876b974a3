import { AppError } from '@trading/errors';
import type { PatAccess } from './scopes';
import type { ServiceName } from './service-identity';

/** The environments an auth deployment serves (APP_ENV). */
const DEPLOYMENT_ENVIRONMENTS = ['DEV', 'UAT', 'PROD'] as const;
export type DeploymentEnvironment = (typeof DEPLOYMENT_ENVIRONMENTS)[number];

/** What a verified caller is, as every service behind the edge sees it. */
export interface Claims {
  /** userId */
  sub: string;
  /** The grant or PAT session id; revocation works on it. */
  sid: string;
  kind: 'oauth' | 'pat';
  clientId?: string;
  patId?: string;
  scope: string[];
  /** PAT sessions only: READ_ONLY sessions may run queries/safe methods only. */
  access?: PatAccess;
  /**
   * The accounts the user let this token reach (chosen on the consent page, or when the PAT was
   * created); absent: every account of the user's, those opened later included.
   */
  accounts?: string[];
  /** The client address the edge saw. */
  ip?: string;
  /** The environment of the auth deployment that issued the token (its APP_ENV); absent on tokens signed before it was added. */
  env?: DeploymentEnvironment;
  /** Behind the edge: the service that signed these claims (set by the verifier, never sent). */
  caller?: ServiceName;
}

/**
 * Whether the caller's token reaches an account. A token limited to chosen accounts reaches
 * those only; whether the account is the user's at all is the accounts service's to say.
 */
export function reachesAccount(claims: Pick<Claims, 'accounts'>, accountId: string): boolean {
  return !claims.accounts || claims.accounts.includes(accountId.toLowerCase());
}

/** The refusal of an account the token was not given: 403, naming the field at fault. */
function accountNotGranted(accountId: string, field: string): AppError {
  return new AppError(
    'FORBIDDEN',
    `This token was not given access to account ${accountId}; the user can add it to the app's or token's accounts`,
    { field },
  );
}

/** Throws `accountNotGranted` unless the token reaches the account. */
export function assertReachesAccount(claims: Pick<Claims, 'accounts'>, accountId: string, field = 'accountId'): void {
  if (!reachesAccount(claims, accountId)) throw accountNotGranted(accountId, field);
}

/** An `accounts` claim as signed: a list of account ids (lower case), or absent. */
export function accountsClaim(value: unknown): string[] | undefined | null {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length > 1000 || !value.every((id) => typeof id === 'string' && /^[0-9a-f-]{36}$/.test(id)))
    return null;
  return value as string[];
}

/** An `env` claim as signed: one of the environments, or absent; anything else is null (the token is refused). */
export function envClaim(value: unknown): DeploymentEnvironment | undefined | null {
  if (value === undefined) return undefined;
  return (DEPLOYMENT_ENVIRONMENTS as readonly unknown[]).includes(value) ? (value as DeploymentEnvironment) : null;
}

/**
 * The sandbox drives orders and transfers to outcomes the market did not decide, so only tokens
 * of a DEV deployment may use it; a token without an environment is taken as not DEV.
 */
export function assertSandboxToken(claims: Pick<Claims, 'env'>): void {
  if (claims.env === 'DEV') return;
  throw new AppError(
    'FORBIDDEN',
    `The sandbox takes DEV tokens; this token is from ${claims.env ?? 'an auth deployment that does not name its environment'}`,
    { field: 'env' },
  );
}
