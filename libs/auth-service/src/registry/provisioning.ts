import type { DataSource, EntityManager } from 'typeorm';
import { AppError } from '@trading/errors';
import type { ClientPolicy } from './client-policy';
import type { JwksUriRules } from './jwks';
import { insertCredentials, newClientId, newClientSecret } from './credentials';
import { RegistrationError, type Problem } from './problems';
import { validateRegistration, type Registration } from './registration';
import { returnedRows } from './sql';
import { APP_COLUMNS, toApp, type IssuedCredentials } from './vendor-apps';

/**
 * The registration, validated (every problem reported), and the scopes approved: undefined for
 * the requested ones, else a non-empty list of requested ones only. Throws every problem of both.
 */
export function checkProvision(
  document: unknown,
  approvedScopes: unknown,
  rules: JwksUriRules,
): { registration: Registration; approved: string[] | undefined } {
  const checked = validateRegistration(document, rules);
  const problems: Problem[] = checked.ok ? [] : [...checked.problems];
  let approved: string[] | undefined;
  if (approvedScopes !== undefined) {
    const requested = checked.ok ? checked.value.scopes : [];
    if (!Array.isArray(approvedScopes) || !approvedScopes.length)
      problems.push({ field: 'approvedScopes', message: 'must be a list of one or more scopes' });
    else {
      approved = approvedScopes as string[];
      approved.forEach((s, i) => {
        if (checked.ok && !(requested as string[]).includes(s))
          problems.push({ field: `approvedScopes[${i}]`, message: `must be one of the requested scopes (${requested.join(', ')})` });
      });
    }
  }
  if (problems.length || !checked.ok) throw new RegistrationError(problems);
  return { registration: checked.value, approved };
}

/** Creates the app in DEV with its DEV credentials (new ones unless given), mailed to the business e-mail. */
export async function provisionApp(
  tx: EntityManager,
  reg: Registration,
  approved: string[] | undefined,
  credentials?: { clientId: string; clientSecret: string },
): Promise<IssuedCredentials> {
  const [row] = await tx.query(
    `INSERT INTO vendor_apps AS a (company_name, company_website, business_email, country, phone, app_name, description, logo_url, homepage_url,
       support_email, support_url, privacy_policy_url, terms_of_service_url, requested_scopes, approved_scopes, environment)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, 'DEV')
     RETURNING ${APP_COLUMNS}`,
    [
      reg.companyName,
      reg.companyWebsite,
      reg.businessEmail,
      reg.country,
      reg.phone ?? null,
      reg.appName,
      reg.description ?? null,
      reg.logoUrl,
      reg.homepageUrl,
      reg.supportEmail,
      reg.supportUrl ?? null,
      reg.privacyPolicyUrl,
      reg.termsOfServiceUrl,
      reg.scopes,
      approved ?? reg.scopes,
    ],
  );
  return insertCredentials(tx, {
    app: toApp(row),
    environment: 'DEV',
    clientId: credentials?.clientId ?? newClientId('DEV'),
    clientSecret: credentials?.clientSecret ?? newClientSecret(),
    redirectUris: reg.redirectUris,
    webOrigins: reg.webOrigins ?? [],
    policy: devPolicy(reg),
  });
}

/** The registration's client policy, each flag it leaves out at its default. */
function devPolicy(reg: Registration): ClientPolicy {
  return {
    tokenEndpointAuthMethod: reg.tokenEndpointAuthMethod ?? 'client_secret_basic',
    jwks: reg.jwks ?? null,
    jwksUri: reg.jwksUri ?? null,
    requirePushedAuthorizationRequests: reg.requirePushedAuthorizationRequests ?? false,
    dpopBoundAccessTokens: reg.dpopBoundAccessTokens ?? false,
    dpopNonceRequired: reg.dpopNonceRequired ?? false,
    requireSecondFactor: reg.requireSecondFactor ?? false,
  };
}

/** Adds scopes, requested and approved, to the app of a DEV client (those it has stay); the approved scopes after. */
export async function addDevScopes(db: DataSource, clientId: string, scopes: string[]): Promise<string[]> {
  const rows = returnedRows<{ approved_scopes: string[] }>(
    await db.query(
      `UPDATE vendor_apps AS a
          SET requested_scopes = a.requested_scopes || ARRAY(SELECT s FROM unnest($2::text[]) AS n(s) WHERE s <> ALL (a.requested_scopes)),
              approved_scopes = a.approved_scopes || ARRAY(SELECT s FROM unnest($2::text[]) AS n(s) WHERE s <> ALL (a.approved_scopes))
         FROM vendor_app_credentials c
        WHERE c.app_id = a.id AND c.client_id = $1 AND c.environment = 'DEV' AND a.environment = 'DEV'
      RETURNING a.approved_scopes`,
      [clientId, scopes],
    ),
  );
  if (!rows[0]) throw new AppError('NOT_FOUND', `No DEV client "${clientId}"`, { field: 'clientId' });
  return rows[0].approved_scopes;
}

/** Adds checked redirect URIs to a DEV client (those it has stay, in their order); its redirect URIs after. */
export async function addDevRedirectUris(db: DataSource, clientId: string, uris: string[]): Promise<string[]> {
  const rows = returnedRows<{ redirect_uris: string[] }>(
    await db.query(
      `UPDATE vendor_app_credentials
        SET redirect_uris = redirect_uris || ARRAY(SELECT u FROM unnest($2::text[]) WITH ORDINALITY AS n(u, i) WHERE u <> ALL (redirect_uris) ORDER BY i)
      WHERE client_id = $1 AND environment = 'DEV'
      RETURNING redirect_uris`,
      [clientId, uris],
    ),
  );
  if (!rows[0]) throw new AppError('NOT_FOUND', `No DEV client "${clientId}"`, { field: 'clientId' });
  return rows[0].redirect_uris;
}
