import { databasePoolMetrics, pingDatabase } from '@trading/db';
import { OAuthAddressBudget, rateLimitRefusals, type RefusalCounter } from '@trading/rate-limit';
import { createService, finishService } from '@trading/service';
import type { Registry } from 'prom-client';
import type { Express } from 'express';
import { clientAddressFromFacade } from '../internal/client-address';
import { htmlNotFound } from '../web/error.page';
import type { AuthServices } from './services';
import { apiBasePath } from './urls';

/** The public listener and the internal one (the facade's way in). */
export interface Listeners {
  app: Express;
  internal: Express;
}

/**
 * Both listeners with their health checks (ready when the database and Redis answer) and metrics
 * (served on the internal listener), and the counter of every 429 auth answers.
 */
export function openListeners({ config, logger, dataSource, store }: AuthServices): {
  listeners: Listeners;
  metrics: Registry;
  refusals: RefusalCounter;
} {
  const { app, internal, metrics } = createService({
    name: 'auth',
    logger,
    trustProxy: config.AUTH_TRUST_PROXY,
    readiness: { database: () => pingDatabase(dataSource), redis: () => store.ping() },
  });
  databasePoolMetrics(metrics, dataSource);
  // Every 429 auth answers, by budget, under the facade's and gateway's metric (served on the internal listener).
  const refusals = rateLimitRefusals(metrics, [
    'oauth_client',
    'oauth_client_auth_failures',
    'oauth_address',
    'sign_in',
    'password_reset',
    'pat_login',
    'admin',
  ]);
  return { listeners: { app, internal }, metrics, refusals };
}

/** Who is calling, before any route: the facade's signed client address, or the address budget of a direct caller. */
export function guardListeners({ config, store, verifier }: AuthServices, { app, internal }: Listeners, metrics: Registry): void {
  // The facade reaches auth's API on the internal listener, with the client address it signed.
  internal.use(clientAddressFromFacade(verifier));
  // Callers reaching this listener directly (not through the facade) spend the facade's address
  // budget for /oauth/* and /pat/login: the same counter, keyed by the address this listener
  // decides on (AUTH_TRUST_PROXY). Not on the internal listener: the facade counted those already.
  const addressBudget = new OAuthAddressBudget(store, config.API_RATE_LIMIT_NAMESPACE, config.OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE, metrics);
  app.use(addressBudget.middleware());
  // The API's spelling of the same endpoints ({base_url}/oauth/*, sent here by an ingress) spends it too.
  const apiPath = apiBasePath(config.AUTH_API_URL);
  if (apiPath) app.use(apiPath, addressBudget.middleware());
}

/** After every route: a browser's page for an address that does not exist, and each listener's error handling. */
export function finishListeners({ logger }: AuthServices, { app, internal }: Listeners, admin: Express): void {
  // A browser at an address that does not exist gets a page in its language; API clients keep problem+json.
  app.use(htmlNotFound());
  finishService(app, logger);
  finishService(internal, logger);
  finishService(admin, logger);
}
