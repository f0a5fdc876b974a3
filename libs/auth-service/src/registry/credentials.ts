import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { AppError, errors } from '@trading/errors';
import { enqueueMail, SECRET_PLACEHOLDER } from '../mail/outbox';
import { returnedRows } from './sql';
import {
  ENVIRONMENTS,
  lockApp,
  policyColumns,
  POLICY_COLUMNS,
  toPolicy,
  type Environment,
  type IssuedCredentials,
  type VendorApp,
} from './vendor-apps';

/** Client ids name their environment; secrets carry a prefix so secret scanners can find leaked ones. */
export const newClientId = (env: Environment) => `tci_${env.toLowerCase()}_${randomBytes(10).toString('hex')}`;
export const newClientSecret = () => `tcs_${randomBytes(32).toString('base64url')}`;
/** The secret has 256 bits of entropy, so a fast hash loses nothing (as for PATs). */
const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

/**
 * Whether the secret is the one whose hash is stored. The comparison runs whether or not there is
 * a stored hash (an unknown client), so the time it takes never says which failed.
 */
export function secretMatches(secret: string, storedHash: string | undefined): boolean {
  const stored = Buffer.from(storedHash ?? '0'.repeat(64), 'hex');
  return timingSafeEqual(Buffer.from(hashSecret(secret), 'hex'), stored);
}

/** Stores new credentials (the secret's hash only) and mails them, the secret included, to the business e-mail. */
export async function insertCredentials(tx: EntityManager, issued: IssuedCredentials): Promise<IssuedCredentials> {
  const { app, environment: env, clientId, clientSecret, redirectUris, webOrigins, policy } = issued;
  await tx.query(
    `INSERT INTO vendor_app_credentials (client_id, app_id, environment, secret_hash, redirect_uris, web_origins,
       token_endpoint_auth_method, jwks, jwks_uri, require_pushed_authorization_requests, dpop_bound_access_tokens, dpop_nonce_required,
       require_second_factor)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    [clientId, app.id, env, hashSecret(clientSecret), redirectUris, webOrigins, ...policyColumns(policy)],
  );
  const note =
    env === 'DEV'
      ? 'Your app is provisioned in DEV.'
      : `Your app is promoted to ${env}. These credentials work only in ${env}; the earlier ones keep working in their own environments.`;
  await enqueueMail(tx, { ...credentialsMail(app, env, clientId, redirectUris, webOrigins, note), secret: clientSecret });
  return issued;
}

/** A new secret for one environment (given, or named by the client id given as `ref`); the old one stops working at once. */
export async function rotateSecret(tx: EntityManager, ref: string, environment: unknown): Promise<IssuedCredentials> {
  const app = await lockApp(tx, ref);
  const env = (environment ?? (ref.startsWith('tci_') ? ref.split('_')[1]!.toUpperCase() : undefined)) as Environment | undefined;
  if (!env || !ENVIRONMENTS.includes(env)) throw errors.badInput('environment', 'environment must be DEV, UAT or PROD');
  const clientSecret = newClientSecret();
  const rows = returnedRows<Record<string, any> & { client_id: string; redirect_uris: string[]; web_origins: string[] }>(
    await tx.query(
      `UPDATE vendor_app_credentials c SET secret_hash = $3, secret_rotated_at = now() WHERE app_id = $1 AND environment = $2
       RETURNING client_id, redirect_uris, web_origins, ${POLICY_COLUMNS}`,
      [app.id, env, hashSecret(clientSecret)],
    ),
  );
  const creds = rows[0];
  if (!creds)
    throw new AppError('NOT_FOUND', `${app.appName} has no ${env} credentials (it is in ${app.environment})`, {
      field: 'environment',
    });
  await enqueueMail(tx, {
    ...credentialsMail(
      app,
      env,
      creds.client_id,
      creds.redirect_uris,
      creds.web_origins,
      'Your client secret was rotated; the previous one no longer works.',
    ),
    secret: clientSecret,
  });
  return {
    app,
    environment: env,
    clientId: creds.client_id,
    clientSecret,
    redirectUris: creds.redirect_uris,
    webOrigins: creds.web_origins,
    policy: toPolicy(creds),
  };
}

function credentialsMail(app: VendorApp, env: Environment, clientId: string, redirectUris: string[], webOrigins: string[], note: string) {
  return {
    to: app.businessEmail,
    subject: `${app.appName}: ${env} credentials for the Trading API`,
    body: [
      `Hello ${app.companyName},`,
      '',
      note,
      '',
      `  Environment:    ${env}`,
      `  client_id:      ${clientId}`,
      `  client_secret:  ${SECRET_PLACEHOLDER}`,
      `  Redirect URIs:  ${redirectUris.join('\n                  ')}`,
      `  Web origins:    ${webOrigins.length ? webOrigins.join('\n                  ') : '(none: the API answers no browser pages)'}`,
      `  Approved scopes: ${app.approvedScopes.join(' ')}`,
      '',
      'Keep the client secret on your server only; we keep only a hash of it and cannot show it again.',
    ].join('\n'),
  };
}
