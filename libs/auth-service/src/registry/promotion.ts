import type { EntityManager } from 'typeorm';
import { AppError, errors } from '@trading/errors';
import { validateClientPolicy, type ClientPolicy } from './client-policy';
import type { JwksUriRules } from './jwks';
import { insertCredentials, newClientId, newClientSecret } from './credentials';
import { RegistrationError } from './problems';
import { returnedRows } from './sql';
import { ENVIRONMENTS, lockApp, policyColumns, type Environment, type IssuedCredentials, type VendorApp } from './vendor-apps';
import { validatePublicPages, validateRedirectUris, validateWebOrigins } from './web-addresses';

export interface PromotionInput {
  to?: unknown;
  redirectUris: unknown;
  webOrigins?: unknown;
  pages?: unknown;
  policy?: unknown;
}

/**
 * Promotes the app one step (DEV → UAT → PROD) with the new environment's own redirect URIs, web
 * origins and policy, and issues its credentials; every problem of the input is reported at once.
 */
export async function promoteApp(tx: EntityManager, ref: string, input: PromotionInput): Promise<IssuedCredentials> {
  const uris = validateRedirectUris(input.redirectUris);
  const origins = validateWebOrigins(input.webOrigins);
  const locked = await lockApp(tx, ref);
  const next = promotionTarget(locked, input.to);
  // Outside DEV users see the logo, privacy policy and terms on the consent page: https only.
  const pages = validatePublicPages(locked, input.pages);
  // Each environment has its own client authentication and policy: the spec profile unless another is chosen.
  const given = input.policy && typeof input.policy === 'object' && !Array.isArray(input.policy) ? input.policy : {};
  // In PROD an app that may trade or move money asks consenting users for a second factor, unless told otherwise.
  const trades = locked.approvedScopes.some((s) => s === 'write:orders' || s === 'write:banking');
  const policy = validateClientPolicy(given as Record<string, unknown>, next, {}, next === 'PROD' && trades);
  const problems = [
    ...(uris.ok ? [] : uris.problems),
    ...(origins.ok ? [] : origins.problems),
    ...(pages.ok ? [] : pages.problems),
    ...(policy.ok ? [] : policy.problems),
  ];
  if (problems.length || !uris.ok || !origins.ok || !pages.ok || !policy.ok) throw new RegistrationError(problems);
  const promoted = { ...locked, ...pages.value, environment: next };
  await tx.query(
    `UPDATE vendor_apps SET environment = $2, logo_url = $3, privacy_policy_url = $4, terms_of_service_url = $5 WHERE id = $1`,
    [promoted.id, next, promoted.logoUrl, promoted.privacyPolicyUrl, promoted.termsOfServiceUrl],
  );
  return insertCredentials(tx, {
    app: promoted,
    environment: next,
    clientId: newClientId(next),
    clientSecret: newClientSecret(),
    redirectUris: uris.value,
    webOrigins: origins.value,
    policy: policy.value,
  });
}

/** The environment an active app is promoted to: the next one, DEV → UAT → PROD; `to`, when given, must name it. */
function promotionTarget(app: VendorApp, to: unknown): Environment {
  if (app.status !== 'ACTIVE') throw new AppError('CONFLICT', `${app.appName} is suspended and cannot be promoted`);
  const next = ENVIRONMENTS[ENVIRONMENTS.indexOf(app.environment) + 1];
  if (!next) throw new AppError('CONFLICT', `${app.appName} is already in PROD`);
  if (to !== undefined && to !== next) {
    throw new AppError(
      'CONFLICT',
      `Promotion goes DEV → UAT → PROD in order: ${app.appName} is in ${app.environment}, so it can be promoted to ${next} only`,
      { field: 'to' },
    );
  }
  return next;
}

/**
 * The environment and policy of a profile change, checked before anything is read: `profile` is
 * required (keys come with it for fapi2); in DEV the jwks_uri may be what DEV registrations allow.
 */
export function checkProfileChange(
  environment: unknown,
  input: unknown,
  devJwksUriRules: JwksUriRules,
): { env: Environment; policy: ClientPolicy } {
  if (typeof environment !== 'string' || !(ENVIRONMENTS as readonly string[]).includes(environment))
    throw errors.badInput('environment', 'environment must be DEV, UAT or PROD');
  const env = environment as Environment;
  const given = input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
  if (given['profile'] === undefined) throw new RegistrationError([{ field: 'profile', message: 'is required: spec or fapi2' }]);
  const checked = validateClientPolicy(given, env, env === 'DEV' ? devJwksUriRules : {});
  if (!checked.ok) throw new RegistrationError(checked.problems);
  return { env, policy: checked.value };
}

/** Writes the policy of the app's credentials in `env`; client id, secret and grants stay. */
export async function changeProfile(
  tx: EntityManager,
  ref: string,
  env: Environment,
  policy: ClientPolicy,
): Promise<{ app: VendorApp; environment: Environment; clientId: string; policy: ClientPolicy }> {
  const app = await lockApp(tx, ref);
  const rows = returnedRows<{ client_id: string; require_second_factor: boolean }>(
    await tx.query(
      `UPDATE vendor_app_credentials SET token_endpoint_auth_method = $3, jwks = $4, jwks_uri = $5,
         require_pushed_authorization_requests = $6, dpop_bound_access_tokens = $7, dpop_nonce_required = $8
       WHERE app_id = $1 AND environment = $2 RETURNING client_id, require_second_factor`,
      // A profile is about the client's protocol: the second-factor rule stays as promotion set it.
      [app.id, env, ...policyColumns(policy).slice(0, 6)],
    ),
  );
  if (!rows[0])
    throw new AppError('NOT_FOUND', `${app.appName} has no ${env} credentials (it is in ${app.environment})`, {
      field: 'environment',
    });
  return { app, environment: env, clientId: rows[0].client_id, policy: { ...policy, requireSecondFactor: rows[0].require_second_factor } };
}
