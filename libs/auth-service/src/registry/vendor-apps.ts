import type { EntityManager } from 'typeorm';
import { AppError, isUuid } from '@trading/errors';
import type { ClientPolicy, TokenEndpointAuthMethod } from './client-policy';
import type { JwkSet } from './jwks';

/** An app moves DEV → UAT → PROD, in that order only. */
export const ENVIRONMENTS = ['DEV', 'UAT', 'PROD'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export interface VendorApp {
  id: string;
  companyName: string;
  businessEmail: string;
  country: string;
  appName: string;
  description: string | null;
  logoUrl: string;
  homepageUrl: string;
  supportEmail: string;
  privacyPolicyUrl: string;
  termsOfServiceUrl: string;
  requestedScopes: string[];
  approvedScopes: string[];
  status: 'ACTIVE' | 'SUSPENDED';
  environment: Environment;
  createdAt: Date;
  suspendedAt: Date | null;
}

export interface Credentials {
  clientId: string;
  environment: Environment;
  redirectUris: string[];
  /** Origins whose web pages may call the API (CORS); empty: server-to-server only. */
  webOrigins: string[];
  createdAt: Date;
  secretRotatedAt: Date;
  /** Client authentication and policy (PAR, DPoP) of this environment. */
  policy: ClientPolicy;
}

/** What the OAuth endpoints know about a client of this deployment's environment. */
export interface Client {
  clientId: string;
  environment: Environment;
  redirectUris: string[];
  app: VendorApp;
  /** How this client authenticates at the token, PAR and revocation endpoints; private_key_jwt refuses the secret. */
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  /** private_key_jwt: the registered public keys (inline), or where the client publishes them. */
  jwks: JwkSet | null;
  jwksUri: string | null;
  /** Authorization requests only through PAR (RFC 9126): a plain authorization request is refused. */
  requirePushedAuthorizationRequests: boolean;
  /** Access tokens only DPoP-bound (RFC 9449): enforced by the token endpoint. */
  dpopBoundAccessTokens: boolean;
  /** Every DPoP proof of this client carries the server's nonce (RFC 9449 §8). */
  dpopNonceRequired: boolean;
  /** Consenting to this app needs a second factor in the session (`apps promote --require-mfa`). */
  requireSecondFactor: boolean;
  /** The app's own secret for OpenID Connect pairwise subject identifiers (never shown anywhere). */
  subjectSecret: string;
}

export interface IssuedCredentials {
  app: VendorApp;
  environment: Environment;
  clientId: string;
  /** Shown once: only its hash is kept. */
  clientSecret: string;
  redirectUris: string[];
  webOrigins: string[];
  policy: ClientPolicy;
}

export const APP_COLUMNS = `a.id, a.company_name, a.business_email, a.country, a.app_name, a.description, a.logo_url, a.homepage_url, a.support_email,
  a.privacy_policy_url, a.terms_of_service_url, a.requested_scopes, a.approved_scopes, a.status, a.environment, a.created_at, a.suspended_at`;

export const POLICY_COLUMNS = `c.token_endpoint_auth_method, c.jwks, c.jwks_uri, c.require_pushed_authorization_requests, c.dpop_bound_access_tokens,
  c.dpop_nonce_required, c.require_second_factor`;

export const toPolicy = (r: Record<string, any>): ClientPolicy => ({
  tokenEndpointAuthMethod: r['token_endpoint_auth_method'],
  jwks: r['jwks'] ?? null,
  jwksUri: r['jwks_uri'] ?? null,
  requirePushedAuthorizationRequests: r['require_pushed_authorization_requests'],
  dpopBoundAccessTokens: r['dpop_bound_access_tokens'],
  dpopNonceRequired: r['dpop_nonce_required'] ?? false,
  requireSecondFactor: r['require_second_factor'] ?? false,
});

/** A client policy as the credentials row's columns, in their order in every statement that writes them. */
export function policyColumns(policy: ClientPolicy): unknown[] {
  return [
    policy.tokenEndpointAuthMethod,
    policy.jwks ? JSON.stringify(policy.jwks) : null,
    policy.jwksUri,
    policy.requirePushedAuthorizationRequests,
    policy.dpopBoundAccessTokens,
    policy.dpopNonceRequired,
    policy.requireSecondFactor,
  ];
}

export function toApp(r: Record<string, any>): VendorApp {
  return {
    id: r['id'],
    companyName: r['company_name'],
    businessEmail: r['business_email'],
    country: r['country'],
    appName: r['app_name'],
    description: r['description'],
    logoUrl: r['logo_url'],
    homepageUrl: r['homepage_url'],
    supportEmail: r['support_email'],
    privacyPolicyUrl: r['privacy_policy_url'],
    termsOfServiceUrl: r['terms_of_service_url'],
    requestedScopes: r['requested_scopes'],
    approvedScopes: r['approved_scopes'],
    status: r['status'],
    environment: r['environment'],
    createdAt: r['created_at'],
    suspendedAt: r['suspended_at'],
  };
}

/** One environment's credentials as listed (without the secret's hash). */
export const toCredentials = (c: Record<string, any>): Credentials => ({
  clientId: c['client_id'],
  environment: c['environment'],
  redirectUris: c['redirect_uris'],
  webOrigins: c['web_origins'],
  createdAt: c['created_at'],
  secretRotatedAt: c['secret_rotated_at'],
  policy: toPolicy(c),
});

export const toClient = (r: Record<string, any>): Client => ({
  clientId: r['client_id'],
  environment: r['client_environment'],
  redirectUris: r['redirect_uris'],
  app: toApp(r),
  ...toPolicy(r),
  subjectSecret: r['subject_secret'],
});

/** The app named by its id or by one of its client ids, locked until the transaction ends. */
export async function lockApp(tx: EntityManager, ref: string): Promise<VendorApp> {
  const byId = isUuid(ref);
  const rows: Array<Record<string, any>> = await tx.query(
    byId
      ? `SELECT ${APP_COLUMNS} FROM vendor_apps a WHERE a.id = $1 FOR UPDATE`
      : `SELECT ${APP_COLUMNS} FROM vendor_apps a WHERE a.id = (SELECT app_id FROM vendor_app_credentials WHERE client_id = $1) FOR UPDATE`,
    [ref],
  );
  if (!rows[0]) throw new AppError('NOT_FOUND', `No app with id or client id "${ref}"`, { field: 'app' });
  return toApp(rows[0]);
}
