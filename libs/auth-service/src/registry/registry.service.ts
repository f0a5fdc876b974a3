import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { AppError, errors, isUuid } from '@trading/errors';
import { queryPrepared, type NotifiedCache, type PreparedStatement } from '@trading/db';
import { enqueueMail, SECRET_PLACEHOLDER } from '../mail/outbox';
import type { GrantService } from '../oauth/grants';
import { returnedRows } from './sql';
import {
  validateClientPolicy,
  validatePublicPages,
  validateRedirectUris,
  validateRegistration,
  validateWebOrigins,
  type ClientPolicy,
  type JwkSet,
  type JwksUriRules,
  type Problem,
  type Registration,
  type TokenEndpointAuthMethod,
} from './registration';

/** An app moves DEV → UAT → PROD, in that order only. */
const ENVIRONMENTS = ['DEV', 'UAT', 'PROD'] as const;
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

/** A registration or promotion that cannot be accepted: every problem, by field. */
class RegistrationError extends AppError {
  constructor(readonly problems: Problem[]) {
    super(
      'UNPROCESSABLE',
      `The registration has ${problems.length} problem(s): ${problems.map((p) => `${p.field} ${p.message}`).join('; ')} (every field, by its JSON key: tools/admin/registration.example.json)`,
      {
        field: problems[0]?.field,
        details: { problems },
      },
    );
  }
}

/** Client ids name their environment; secrets carry a prefix so secret scanners can find leaked ones. */
const newClientId = (env: Environment) => `tci_${env.toLowerCase()}_${randomBytes(10).toString('hex')}`;
const newClientSecret = () => `tcs_${randomBytes(32).toString('base64url')}`;
/** The secret has 256 bits of entropy, so a fast hash loses nothing (as for PATs). */
const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

const APP_COLUMNS = `a.id, a.company_name, a.business_email, a.country, a.app_name, a.description, a.logo_url, a.homepage_url, a.support_email,
  a.privacy_policy_url, a.terms_of_service_url, a.requested_scopes, a.approved_scopes, a.status, a.environment, a.created_at, a.suspended_at`;

const POLICY_COLUMNS = `c.token_endpoint_auth_method, c.jwks, c.jwks_uri, c.require_pushed_authorization_requests, c.dpop_bound_access_tokens,
  c.dpop_nonce_required`;

const toPolicy = (r: Record<string, any>): ClientPolicy => ({
  tokenEndpointAuthMethod: r['token_endpoint_auth_method'],
  jwks: r['jwks'] ?? null,
  jwksUri: r['jwks_uri'] ?? null,
  requirePushedAuthorizationRequests: r['require_pushed_authorization_requests'],
  dpopBoundAccessTokens: r['dpop_bound_access_tokens'],
  dpopNonceRequired: r['dpop_nonce_required'] ?? false,
});

/** A client with its app, whatever its environment and status (the caller decides: the row is remembered by client id). */
const CLIENT_ROW: PreparedStatement = {
  name: 'client-with-secret',
  text: `SELECT ${APP_COLUMNS}, a.subject_secret, c.client_id, c.redirect_uris, c.environment AS client_environment, c.secret_hash,
                ${POLICY_COLUMNS}
           FROM vendor_app_credentials c JOIN vendor_apps a ON a.id = c.app_id
          WHERE c.client_id = $1`,
};

/** A client's row as read for token requests, kept by client id (null: no such client). */
export type ClientRow = Record<string, any> | null;

function toApp(r: Record<string, any>): VendorApp {
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

/**
 * The service team's side of vendor registration and app environments: provisioning a registered app in DEV, promoting
 * it to UAT and PROD (each with its own credentials and redirect URIs), rotating secrets,
 * suspending. Every credential is mailed to the business e-mail through the outbox.
 */
export class RegistryService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly grants: GrantService,
    /** Clients read for token requests, by client id, dropped when a trigger announces a change to them or their app. */
    private readonly rememberedClients?: Pick<NotifiedCache<ClientRow>, 'get' | 'forgetAll'>,
    /** What a DEV registration's jwksUri may point at beyond public hosts (promotions never take more). */
    private readonly devJwksUriRules: JwksUriRules = {},
  ) {}

  /**
   * Validates the registration (every problem reported, nothing created if any) and creates
   * the app in DEV. `approvedScopes` defaults to the requested ones and may only narrow them.
   * `credentials` exists for the all-in-one demo seed only.
   */
  async provision(
    document: unknown,
    options: { approvedScopes?: unknown; credentials?: { clientId: string; clientSecret: string } } = {},
  ): Promise<IssuedCredentials> {
    const checked = validateRegistration(document, this.devJwksUriRules);
    const problems = checked.ok ? [] : [...checked.problems];
    let approved: string[] | undefined;
    if (options.approvedScopes !== undefined) {
      const requested = checked.ok ? checked.value.scopes : [];
      if (!Array.isArray(options.approvedScopes) || !options.approvedScopes.length)
        problems.push({ field: 'approvedScopes', message: 'must be a list of one or more scopes' });
      else {
        approved = options.approvedScopes as string[];
        approved.forEach((s, i) => {
          if (checked.ok && !(requested as string[]).includes(s))
            problems.push({ field: `approvedScopes[${i}]`, message: `must be one of the requested scopes (${requested.join(', ')})` });
        });
      }
    }
    if (problems.length || !checked.ok) throw new RegistrationError(problems);
    const reg: Registration = checked.value;
    const clientId = options.credentials?.clientId ?? newClientId('DEV');
    const clientSecret = options.credentials?.clientSecret ?? newClientSecret();

    return this.dataSource.transaction(async (tx) => {
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
      const app = toApp(row);
      const webOrigins = reg.webOrigins ?? [];
      const policy: ClientPolicy = {
        tokenEndpointAuthMethod: reg.tokenEndpointAuthMethod ?? 'client_secret_basic',
        jwks: reg.jwks ?? null,
        jwksUri: reg.jwksUri ?? null,
        requirePushedAuthorizationRequests: reg.requirePushedAuthorizationRequests ?? false,
        dpopBoundAccessTokens: reg.dpopBoundAccessTokens ?? false,
        dpopNonceRequired: reg.dpopNonceRequired ?? false,
      };
      await this.insertCredentials(tx, app, 'DEV', clientId, clientSecret, reg.redirectUris, webOrigins, policy);
      return { app, environment: 'DEV', clientId, clientSecret, redirectUris: reg.redirectUris, webOrigins, policy };
    });
  }

  /** The all-in-one demo app (fixed DEV credentials printed in the banner): provisioned once, then left alone. */
  async ensureDemoApp(document: unknown, credentials: { clientId: string; clientSecret: string }): Promise<void> {
    if (await this.findClient(credentials.clientId, 'DEV', { includeSuspended: true })) return;
    await this.provision(document, { credentials });
  }

  /**
   * Approves more scopes for the app of a DEV client (requested and approved, those it has stay):
   * the all-in-one's demo app gains the scopes its sample vendor uses, also in a data directory
   * made before it used them. DEV only: no other environment's approval changes outside the admin API.
   */
  async approveDevScopes(clientId: string, scopes: string[]): Promise<string[]> {
    const rows = returnedRows<{ approved_scopes: string[] }>(
      await this.written(() =>
        this.dataSource.query(
          `UPDATE vendor_apps AS a
              SET requested_scopes = a.requested_scopes || ARRAY(SELECT s FROM unnest($2::text[]) AS n(s) WHERE s <> ALL (a.requested_scopes)),
                  approved_scopes = a.approved_scopes || ARRAY(SELECT s FROM unnest($2::text[]) AS n(s) WHERE s <> ALL (a.approved_scopes))
             FROM vendor_app_credentials c
            WHERE c.app_id = a.id AND c.client_id = $1 AND c.environment = 'DEV' AND a.environment = 'DEV'
          RETURNING a.approved_scopes`,
          [clientId, scopes],
        ),
      ),
    );
    if (!rows[0]) throw new AppError('NOT_FOUND', `No DEV client "${clientId}"`, { field: 'clientId' });
    return rows[0].approved_scopes;
  }

  /**
   * Adds redirect URIs to a DEV client (those it has stay; each checked as at registration): the
   * all-in-one registers the API docs' OAuth redirect for its demo app this way. DEV only: no other
   * environment's redirect URIs change outside registration and promotion.
   */
  async addDevRedirectUris(clientId: string, uris: string[]): Promise<string[]> {
    const checked = validateRedirectUris(uris);
    if (!checked.ok) throw new RegistrationError(checked.problems);
    const rows = returnedRows<{ redirect_uris: string[] }>(
      await this.written(() =>
        this.dataSource.query(
          `UPDATE vendor_app_credentials
            SET redirect_uris = redirect_uris || ARRAY(SELECT u FROM unnest($2::text[]) WITH ORDINALITY AS n(u, i) WHERE u <> ALL (redirect_uris) ORDER BY i)
          WHERE client_id = $1 AND environment = 'DEV'
          RETURNING redirect_uris`,
          [clientId, checked.value],
        ),
      ),
    );
    if (!rows[0]) throw new AppError('NOT_FOUND', `No DEV client "${clientId}"`, { field: 'clientId' });
    return rows[0].redirect_uris;
  }

  /** DEV → UAT → PROD, one step at a time, with the new environment's own redirect URIs (and web origins, if any). */
  async promote(
    ref: string,
    input: { to?: unknown; redirectUris: unknown; webOrigins?: unknown; pages?: unknown; policy?: unknown },
  ): Promise<IssuedCredentials> {
    const uris = validateRedirectUris(input.redirectUris);
    const origins = validateWebOrigins(input.webOrigins);
    return this.written(() =>
      this.dataSource.transaction(async (tx) => {
        const locked = await this.lockApp(tx, ref);
        const next = promotionTarget(locked, input.to);
        // Outside DEV users see the logo, privacy policy and terms on the consent page: https only.
        const pages = validatePublicPages(locked, input.pages);
        // Each environment has its own client authentication and policy: the spec profile unless another is chosen.
        const given = input.policy && typeof input.policy === 'object' && !Array.isArray(input.policy) ? input.policy : {};
        const policy = validateClientPolicy(given as Record<string, unknown>, next);
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
        const clientSecret = newClientSecret();
        const clientId = newClientId(next);
        await this.insertCredentials(tx, promoted, next, clientId, clientSecret, uris.value, origins.value, policy.value);
        return {
          app: promoted,
          environment: next,
          clientId,
          clientSecret,
          redirectUris: uris.value,
          webOrigins: origins.value,
          policy: policy.value,
        };
      }),
    );
  }

  /** A new secret for one environment; the old one stops working at once. */
  async rotateSecret(ref: string, environment?: unknown): Promise<IssuedCredentials> {
    return this.written(() =>
      this.dataSource.transaction(async (tx) => {
        const app = await this.lockApp(tx, ref);
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
      }),
    );
  }

  /**
   * Moves one environment's credentials to an OAuth profile (`policy.profile` is required; keys
   * come with it for fapi2): how credentials promoted before profiles existed leave their mix.
   * Client id and secret stay; grants stay (their tokens follow the new policy from the next request).
   */
  async setProfile(
    ref: string,
    environment: unknown,
    input: unknown,
  ): Promise<{ app: VendorApp; environment: Environment; clientId: string; policy: ClientPolicy }> {
    if (typeof environment !== 'string' || !(ENVIRONMENTS as readonly string[]).includes(environment))
      throw errors.badInput('environment', 'environment must be DEV, UAT or PROD');
    const env = environment as Environment;
    const given = input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
    if (given['profile'] === undefined) throw new RegistrationError([{ field: 'profile', message: 'is required: spec or fapi2' }]);
    const checked = validateClientPolicy(given, env, env === 'DEV' ? this.devJwksUriRules : {});
    if (!checked.ok) throw new RegistrationError(checked.problems);
    const policy = checked.value;
    return this.written(() =>
      this.dataSource.transaction(async (tx) => {
        const app = await this.lockApp(tx, ref);
        const rows = returnedRows<{ client_id: string }>(
          await tx.query(
            `UPDATE vendor_app_credentials SET token_endpoint_auth_method = $3, jwks = $4, jwks_uri = $5,
               require_pushed_authorization_requests = $6, dpop_bound_access_tokens = $7, dpop_nonce_required = $8
             WHERE app_id = $1 AND environment = $2 RETURNING client_id`,
            [app.id, env, ...policyColumns(policy)],
          ),
        );
        if (!rows[0])
          throw new AppError('NOT_FOUND', `${app.appName} has no ${env} credentials (it is in ${app.environment})`, {
            field: 'environment',
          });
        return { app, environment: env, clientId: rows[0].client_id, policy };
      }),
    );
  }

  /** Suspends an app: its clients are refused from now on and every grant it holds ends. */
  async suspend(ref: string): Promise<{ app: VendorApp; grantsRevoked: number }> {
    const app = await this.written(() =>
      this.dataSource.transaction(async (tx) => {
        const found = await this.lockApp(tx, ref);
        if (found.status === 'SUSPENDED') return found;
        const [row] = returnedRows<Record<string, any>>(
          await tx.query(`UPDATE vendor_apps a SET status = 'SUSPENDED', suspended_at = now() WHERE id = $1 RETURNING ${APP_COLUMNS}`, [
            found.id,
          ]),
        );
        return toApp(row!);
      }),
    );
    return { app, grantsRevoked: await this.grants.revokeForApp(app.id) };
  }

  async list(): Promise<Array<VendorApp & { credentials: Credentials[] }>> {
    const apps: Array<Record<string, any>> = await this.dataSource.query(
      `SELECT ${APP_COLUMNS} FROM vendor_apps a ORDER BY a.created_at, a.id`,
    );
    const creds: Array<Record<string, any>> = await this.dataSource.query(
      `SELECT app_id, client_id, environment, redirect_uris, web_origins, created_at, secret_rotated_at, ${POLICY_COLUMNS}
         FROM vendor_app_credentials c ORDER BY array_position(ARRAY['DEV','UAT','PROD'], environment)`,
    );
    return apps.map((a) => ({
      ...toApp(a),
      credentials: creds
        .filter((c) => c['app_id'] === a['id'])
        .map((c) => ({
          clientId: c['client_id'],
          environment: c['environment'],
          redirectUris: c['redirect_uris'],
          webOrigins: c['web_origins'],
          createdAt: c['created_at'],
          secretRotatedAt: c['secret_rotated_at'],
          policy: toPolicy(c),
        })),
    }));
  }

  /**
   * Every web origin registered for `environment` by an active app, once each: what the facade
   * answers CORS for (it asks for the whole set now and then, never per request).
   */
  async webOrigins(environment: Environment): Promise<string[]> {
    const rows: Array<{ origin: string }> = await this.dataSource.query(
      `SELECT DISTINCT o.origin FROM vendor_app_credentials c JOIN vendor_apps a ON a.id = c.app_id, unnest(c.web_origins) AS o(origin)
        WHERE c.environment = $1 AND a.status = 'ACTIVE' ORDER BY o.origin`,
      [environment],
    );
    return rows.map((r) => r.origin);
  }

  /** A client of `environment` whose app is active; null for unknown ids, other environments' ids and suspended apps. */
  async findClient(clientId: unknown, environment: Environment, options: { includeSuspended?: boolean } = {}): Promise<Client | null> {
    const row = await this.clientRow(clientId, environment, options);
    return row && toClient(row);
  }

  /**
   * The client whose secret this is, or null. The comparison runs whether or not the client
   * exists, so the answer's shape never says which failed. (Whether a client id exists is no
   * secret: it is in every authorization URL; a remembered one may answer sooner.)
   */
  async authenticate(
    clientId: unknown,
    clientSecret: unknown,
    environment: Environment,
    options: { includeSuspended?: boolean } = {},
  ): Promise<Client | null> {
    if (typeof clientSecret !== 'string' || clientSecret.length > 200) return null;
    const row = await this.clientRow(clientId, environment, options);
    const stored = Buffer.from((row?.['secret_hash'] as string | undefined) ?? '0'.repeat(64), 'hex');
    const ok = timingSafeEqual(Buffer.from(hashSecret(clientSecret), 'hex'), stored);
    return row && ok ? toClient(row) : null;
  }

  /** A write to clients or apps: this instance forgets the clients it remembers at once (the others hear the trigger's announcement). */
  private async written<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } finally {
      this.rememberedClients?.forgetAll();
    }
  }

  private async clientRow(
    clientId: unknown,
    environment: Environment,
    options: { includeSuspended?: boolean },
  ): Promise<Record<string, any> | null> {
    if (typeof clientId !== 'string' || clientId.length > 100) return null;
    // Read on every token request: from memory while PostgreSQL's announcements of changes are
    // heard (rememberedClients), else a prepared statement (planned once per connection).
    // Frozen: a remembered row is shared by every request that reads it, so none may change it for the others.
    const load = async (): Promise<ClientRow> =>
      deepFreeze((await queryPrepared<Record<string, any>>(this.dataSource, CLIENT_ROW, [clientId]))[0] ?? null);
    const row = this.rememberedClients ? await this.rememberedClients.get(clientId, load) : await load();
    if (!row || row['client_environment'] !== environment) return null;
    return row['status'] === 'ACTIVE' || options.includeSuspended ? row : null;
  }

  private async lockApp(tx: EntityManager, ref: string): Promise<VendorApp> {
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

  private async insertCredentials(
    tx: EntityManager,
    app: VendorApp,
    env: Environment,
    clientId: string,
    clientSecret: string,
    redirectUris: string[],
    webOrigins: string[],
    policy: ClientPolicy,
  ): Promise<void> {
    await tx.query(
      `INSERT INTO vendor_app_credentials (client_id, app_id, environment, secret_hash, redirect_uris, web_origins,
         token_endpoint_auth_method, jwks, jwks_uri, require_pushed_authorization_requests, dpop_bound_access_tokens, dpop_nonce_required)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [clientId, app.id, env, hashSecret(clientSecret), redirectUris, webOrigins, ...policyColumns(policy)],
    );
    const note =
      env === 'DEV'
        ? 'Your app is provisioned in DEV.'
        : `Your app is promoted to ${env}. These credentials work only in ${env}; the earlier ones keep working in their own environments.`;
    await enqueueMail(tx, { ...credentialsMail(app, env, clientId, redirectUris, webOrigins, note), secret: clientSecret });
  }
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

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value) && !ArrayBuffer.isView(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

const toClient = (r: Record<string, any>): Client => ({
  clientId: r['client_id'],
  environment: r['client_environment'],
  redirectUris: r['redirect_uris'],
  app: toApp(r),
  ...toPolicy(r),
  subjectSecret: r['subject_secret'],
});

/** A client policy as the credentials row's columns, in their order in every statement that writes them. */
function policyColumns(policy: ClientPolicy): unknown[] {
  return [
    policy.tokenEndpointAuthMethod,
    policy.jwks ? JSON.stringify(policy.jwks) : null,
    policy.jwksUri,
    policy.requirePushedAuthorizationRequests,
    policy.dpopBoundAccessTokens,
    policy.dpopNonceRequired,
  ];
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
