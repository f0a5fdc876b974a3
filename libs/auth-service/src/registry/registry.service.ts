import type { DataSource } from 'typeorm';
import type { GrantService } from '../oauth/grants';
import { clientRow, type RememberedClients } from './client-lookup';
import type { ClientPolicy } from './client-policy';
import { rotateSecret, secretMatches } from './credentials';
import type { JwksUriRules } from './jwks';
import { RegistrationError } from './problems';
import { changeProfile, checkProfileChange, promoteApp, type PromotionInput } from './promotion';
import { addDevRedirectUris, addDevScopes, checkProvision, provisionApp } from './provisioning';
import { returnedRows } from './sql';
import {
  APP_COLUMNS,
  lockApp,
  POLICY_COLUMNS,
  toApp,
  toClient,
  toCredentials,
  type Client,
  type Credentials,
  type Environment,
  type IssuedCredentials,
  type VendorApp,
} from './vendor-apps';
import { validateRedirectUris } from './web-addresses';

export type { ClientRow } from './client-lookup';
export type { Client, Environment, IssuedCredentials, VendorApp } from './vendor-apps';

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
    private readonly rememberedClients?: RememberedClients,
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
    const { registration, approved } = checkProvision(document, options.approvedScopes, this.devJwksUriRules);
    return this.dataSource.transaction((tx) => provisionApp(tx, registration, approved, options.credentials));
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
    return this.written(() => addDevScopes(this.dataSource, clientId, scopes));
  }

  /**
   * Adds redirect URIs to a DEV client (those it has stay; each checked as at registration): the
   * all-in-one registers the API docs' OAuth redirect for its demo app this way. DEV only: no other
   * environment's redirect URIs change outside registration and promotion.
   */
  async addDevRedirectUris(clientId: string, uris: string[]): Promise<string[]> {
    const checked = validateRedirectUris(uris);
    if (!checked.ok) throw new RegistrationError(checked.problems);
    return this.written(() => addDevRedirectUris(this.dataSource, clientId, checked.value));
  }

  /** DEV → UAT → PROD, one step at a time, with the new environment's own redirect URIs (and web origins, if any). */
  async promote(ref: string, input: PromotionInput): Promise<IssuedCredentials> {
    return this.written(() => this.dataSource.transaction((tx) => promoteApp(tx, ref, input)));
  }

  /** A new secret for one environment; the old one stops working at once. */
  async rotateSecret(ref: string, environment?: unknown): Promise<IssuedCredentials> {
    return this.written(() => this.dataSource.transaction((tx) => rotateSecret(tx, ref, environment)));
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
    const { env, policy } = checkProfileChange(environment, input, this.devJwksUriRules);
    return this.written(() => this.dataSource.transaction((tx) => changeProfile(tx, ref, env, policy)));
  }

  /** Suspends an app: its clients are refused from now on and every grant it holds ends. */
  async suspend(ref: string): Promise<{ app: VendorApp; grantsRevoked: number }> {
    const app = await this.written(() =>
      this.dataSource.transaction(async (tx) => {
        const found = await lockApp(tx, ref);
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
      credentials: creds.filter((c) => c['app_id'] === a['id']).map(toCredentials),
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
    const row = await clientRow(this.dataSource, this.rememberedClients, clientId, environment, options);
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
    const row = await clientRow(this.dataSource, this.rememberedClients, clientId, environment, options);
    const ok = secretMatches(clientSecret, row?.['secret_hash'] as string | undefined);
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
}
