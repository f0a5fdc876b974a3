import { DpopVerifier } from '@trading/auth';
import { ConfigError } from '@trading/config';
import type { DataSource } from '@trading/db';
import { configureProblemTypes } from '@trading/errors';
import { createLogger, type Logger } from '@trading/logging';
import type { KeyValueStore } from '@trading/redis';
import { Lifecycle, type ServiceApp } from '@trading/service';
import { dashboardConfigDefaults, type AuthAppConfig, type AuthConfig } from './config';
import { webOriginsRoute } from './internal/web-origins.route';
import type { TokenSigner } from './keys/token-signer';
import type { MailDispatcher } from './mail/outbox';
import type { ClientKeySetsOptions } from './oauth/client-keys';
import type { GrantService } from './oauth/grants';
import type { LoginActivityService } from './pat/login-activity.service';
import type { PatService } from './pat/pat.service';
import type { RegistryService } from './registry/registry.service';
import type { UsersService } from './users/users.service';
import { adminApp } from './wiring/admin';
import { startBackgroundWork } from './wiring/background';
import { configProblems } from './wiring/config-problems';
import { finishListeners, guardListeners, openListeners } from './wiring/listeners';
import { mountOAuthRoutes, mountSigningKeys } from './wiring/oauth';
import { mountPages } from './wiring/pages';
import { mountPatRoutes } from './wiring/pat';
import { mountWebhooks, type WebhookDeps } from './wiring/webhooks';
import type { WebhookDispatcher } from './webhooks/webhook-dispatcher';
import { openAuthServices } from './wiring/services';

export interface AuthDeps {
  logger?: Logger;
  /** Shared session store (the all-in-one mode passes one store to every app). */
  store?: KeyValueStore;
  /** How jwks_uri hosts are resolved and which certificates their servers may present besides the system's (tests). */
  clientKeys?: Pick<ClientKeySetsOptions, 'resolve' | 'ca'>;
  /** The settlement stream's log the all-in-one's apps share (else auth connects to Redis for it). */
  events?: WebhookDeps['events'];
  /** How webhook receivers' names are resolved and which certificates they may present (tests). */
  sending?: WebhookDeps['sending'];
}

export interface AuthApp extends ServiceApp {
  dataSource: DataSource;
  users: UsersService;
  pats: PatService;
  activity: LoginActivityService;
  signer: TokenSigner;
  registry: RegistryService;
  grants: GrantService;
  mail: MailDispatcher;
  /** Sends webhook deliveries (running unless WEBHOOK_DISPATCH_POLL_MS is 0; tests drive or crash one of their own). */
  webhooks: WebhookDispatcher;
  /** Another sender on the same database, as another auth instance would run (crash tests, the benchmark); started by the caller. */
  newWebhookDispatcher: (pollMs?: number) => WebhookDispatcher;
}

export { dashboardConfigDefaults, loadAuthConfig, type AuthAppConfig } from './config';
/** AES-256-GCM under a key derived from a secret: also what the all-in-one seals its services' identities with. */
export { KeyEncryption } from './keys/key-encryption';
/** Where an account's last reset mail is marked in Redis (a test makes the floor's time pass by expiring it). */
export { resetMailFloorKey } from './password-reset/reset-mail-budget';

/**
 * Auth as a service: its stores and services, its two listeners with health and metrics, then
 * in order the signing keys, the PAT routes, the facade's web origins, the OAuth endpoints, the
 * browser's pages, and the admin API on a listener of its own; the mail and retention work runs
 * in the background.
 */
export async function createAuthApp(input: AuthAppConfig, deps: AuthDeps = {}): Promise<AuthApp> {
  const config: AuthConfig = { ...dashboardConfigDefaults(), ...input };
  const problems = configProblems(config);
  if (problems.length) throw new ConfigError('auth', problems);
  const logger = deps.logger ?? createLogger('auth', config.LOG_LEVEL);
  // Everything opened below is closed in reverse on close(), or at once if a later step fails.
  // Problem `type` URLs name pages this origin serves (/problems/<code>).
  configureProblemTypes(config.AUTH_ISSUER);
  const life = Lifecycle.of('auth', logger);
  return life.build(async () => {
    const services = await openAuthServices(life, config, deps.store, logger);
    const { listeners, metrics, refusals } = openListeners(services);
    mountSigningKeys(listeners.app, services.signer);
    guardListeners(services, listeners, metrics);
    // DPoP proofs (RFC 9449): the jti replay cache is in Redis, shared with every instance and both edges.
    const dpopVerifier = new DpopVerifier(services.store);
    mountPatRoutes(services, listeners, refusals, dpopVerifier);
    // The vendors' registered web origins, which only the facade may ask for (on the internal listener).
    listeners.internal.use(webOriginsRoute(services.registry, config.APP_ENV, services.verifier));
    const { oauth, clientLimits } = mountOAuthRoutes(services, listeners, refusals, dpopVerifier, deps.clientKeys);
    mountPages(services, listeners.app, refusals, oauth);
    const webhooks = await mountWebhooks(services, listeners, oauth, clientLimits, deps);
    const admin = adminApp(services, refusals, [webhooks.adminRoutes]);
    finishListeners(services, listeners, admin);
    startBackgroundWork(services);

    const { dataSource, users, pats, activity, signer, registry, grants, mail } = services;
    return {
      name: 'auth',
      dataSource,
      app: listeners.app,
      internal: listeners.internal,
      admin,
      users,
      pats,
      activity,
      signer,
      registry,
      grants,
      mail,
      webhooks: webhooks.dispatcher,
      newWebhookDispatcher: webhooks.newDispatcher,
      close: () => life.close(),
    };
  });
}
export type { WebhookDispatcher } from './webhooks/webhook-dispatcher';
