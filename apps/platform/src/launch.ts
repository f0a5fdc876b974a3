import type { AccountsApp } from '@trading/accounts-service';
import type { BankingApp } from '@trading/banking-service';
import { ensureDatabase, withDatabaseName } from '@trading/db';
import { MemoryEventLog, RedisEventLog, type EventLog } from '@trading/events';
import { createLogger, type Logger } from '@trading/logging';
import { connectStore, RedisStore, type KeyValueStore } from '@trading/redis';
import { generateServiceKey, SERVICE_NAMES, TrustedServiceKeys, type ServiceKey, type ServiceName } from '@trading/auth';
import { Lifecycle, listenService, type RunningService, type ServiceApp, type ServicePlan } from '@trading/service';
import type { PlatformOverrides, SettlementService, SettlementServiceSpec, StartSettlementService } from './app';
import type { PlatformConfig } from './config';
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from './embedded-postgres';

/**
 * What every service of the all-in-one starts from: its database on the one PostgreSQL server, the
 * shared store and event log, the services' keys and identities, and the settings they share.
 */

/** Creates the instance and listens: what `npm start` does. */
const startOnce: StartSettlementService = async (spec) => {
  const app = await spec.create();
  try {
    const server = await listenService(app, spec.listen);
    return {
      app,
      server,
      close: async () => {
        await server.close();
        await app.close();
      },
    };
  } catch (err) {
    await app.close();
    throw err;
  }
};

/** The database server (the embedded one unless DATABASE_URL names one) with a database per service. */
export async function openDatabases(
  config: PlatformConfig,
  life: Lifecycle,
  logger: Logger,
): Promise<{ serverUrl: string; embedded: boolean }> {
  let pg: EmbeddedPostgresServer | undefined;
  if (!config.DATABASE_URL) {
    pg = await startEmbeddedPostgres(config.PLATFORM_DATA_DIR, config.EMBEDDED_POSTGRES_PORT, logger);
    life.defer('embedded PostgreSQL', () => pg!.stop());
  }
  const serverUrl = config.DATABASE_URL ?? pg!.url;
  for (const service of ['auth', 'accounts', 'banking', 'oms'])
    await ensureDatabase(withDatabaseName(serverUrl, `${config.PLATFORM_DB_PREFIX}${service}`));
  return { serverUrl, embedded: !!pg };
}

export type Started<A> = { app: A; server: RunningService };

/** The settings every service takes (`common`), those of the services with a database, and the edges' (gateway, facade). */
function sharedSettings(config: PlatformConfig) {
  const host = config.PLATFORM_BIND;
  return {
    common: { LOG_LEVEL: config.LOG_LEVEL, REDIS_URL: config.REDIS_URL, LISTEN_HOST: host, INTERNAL_LISTEN_HOST: host },
    // What the services with a database (accounts, banking, oms, auth) take besides `common`.
    database: { DB_STATEMENT_TIMEOUT_MS: config.DB_STATEMENT_TIMEOUT_MS },
    edgeSettings: {
      API_RATE_LIMIT_PER_MINUTE: config.API_RATE_LIMIT_PER_MINUTE,
      API_ORDER_RATE_LIMIT_PER_MINUTE: config.API_ORDER_RATE_LIMIT_PER_MINUTE,
      API_ADDRESS_RATE_LIMIT_PER_MINUTE: config.API_ADDRESS_RATE_LIMIT_PER_MINUTE,
      API_USER_RATE_LIMIT_PER_MINUTE: config.API_USER_RATE_LIMIT_PER_MINUTE,
      API_APP_RATE_LIMIT_PER_MINUTE: config.API_APP_RATE_LIMIT_PER_MINUTE,
      API_USER_ORDER_RATE_LIMIT_PER_MINUTE: config.API_USER_ORDER_RATE_LIMIT_PER_MINUTE,
      API_RATE_LIMIT_NAMESPACE: `${config.PLATFORM_DB_PREFIX}api`,
      SESSION_CACHE_ENTRIES: config.SESSION_CACHE_ENTRIES, // the apps share `store`, which caches as this says
    },
  };
}

/** What every service of this process is started with: the shared store and stream, identities, settings and helpers. */
export interface Launch extends ReturnType<typeof sharedSettings> {
  config: PlatformConfig;
  overrides: PlatformOverrides;
  db(service: string): string;
  store: KeyValueStore;
  events: EventLog;
  /** The settlement stream, price changes for live quotes, accounts' changes (for the OMS's memory of accounts). */
  streams: { events: string; ticks: string; accountChanges: string };
  keys: Record<ServiceName, ServiceKey>;
  identity(service: ServiceName): { SERVICE_KEY: ServiceKey; SERVICE_TRUSTED_KEYS: TrustedServiceKeys };
  at(port: number, internalPort: number): ServicePlan['listen'];
  /** Listens with `app`, both closed with the platform. */
  started<A extends ServiceApp>(app: A, addresses: ServicePlan['listen']): Promise<Started<A>>;
  log(name: string): Logger;
  /** A peer of this process, called without a socket unless PLATFORM_IN_PROCESS_CALLS=false. */
  inProcess<T>(endpoint: () => T | undefined): (() => T | undefined) | undefined;
  startSettlementService<A extends BankingApp | AccountsApp>(spec: SettlementServiceSpec<A>): Promise<SettlementService<A>>;
  /** The auth port must be known before its issuer is: listen first on the configured port. */
  issuer: string;
  /**
   * The public URLs as clients on this machine call them: DPoP proofs name them (`htu`). With
   * port 0 (most tests) they are not known before listening; a DPoP spec chooses its ports.
   */
  publicApi: string;
}

export async function launchContext(
  config: PlatformConfig,
  overrides: PlatformOverrides,
  life: Lifecycle,
  logger: Logger,
  serverUrl: string,
): Promise<Launch> {
  // One store for every app: with real Redis that changes nothing; with the in-process
  // stand-in it is what lets the facade see the sessions auth creates.
  const store = await connectStore(config, {
    cachedReads: { maxEntries: config.SESSION_CACHE_ENTRIES },
    fallbackToMemory: true,
    onFallback: (reason) => logger.warn(`${reason}: using an in-process store (sessions and limits live only in this process)`),
  });
  life.defer('redis store', () => store.close());
  // Settlement events: Redis streams on the same Redis, or an in-process log every app shares.
  const events: EventLog = store instanceof RedisStore ? new RedisEventLog(store.client) : new MemoryEventLog();
  life.defer('settlement stream', () => events.close());

  // Each service has its own key and all trust each other's public keys. `npm start` hands over the
  // installation's (kept in its data directory: service-identities.ts), so what the OMS signed before a
  // restart is still verified after it; without them (tests in one process) fresh ones.
  const keys =
    overrides.serviceKeys ?? (Object.fromEntries(SERVICE_NAMES.map((s) => [s, generateServiceKey(s)])) as Record<ServiceName, ServiceKey>);
  const trusted = TrustedServiceKeys.of(...Object.values(keys));
  const host = config.PLATFORM_BIND;
  return {
    ...sharedSettings(config),
    config,
    overrides,
    db: (service) => withDatabaseName(serverUrl, `${config.PLATFORM_DB_PREFIX}${service}`),
    store,
    events,
    // Price changes for live quotes: a capped stream beside it (the same log, so the in-process one without Redis too).
    streams: {
      events: `${config.PLATFORM_DB_PREFIX}oms:events`,
      ticks: `${config.PLATFORM_DB_PREFIX}market:ticks`,
      accountChanges: `${config.PLATFORM_DB_PREFIX}accounts:changes`,
    },
    keys,
    identity: (service) => ({ SERVICE_KEY: keys[service], SERVICE_TRUSTED_KEYS: trusted }),
    at: (port, internalPort) => ({ public: { port, host }, internal: { port: internalPort, host } }),
    started: async (app, addresses) => {
      life.defer(app.name, () => app.close());
      const server = await listenService(app, addresses);
      life.defer(`${app.name} listeners`, () => server.close());
      return { app, server };
    },
    log: (name) => createLogger(name, config.LOG_LEVEL, overrides.logDestination),
    inProcess: (endpoint) => (config.PLATFORM_IN_PROCESS_CALLS ? endpoint : undefined),
    startSettlementService: async (spec) => {
      const service = await (overrides.startSettlementService ?? startOnce)(spec);
      life.defer(`${spec.group} (with its listeners)`, () => service.close());
      return service;
    },
    issuer: `http://localhost:${config.AUTH_PORT}`,
    publicApi: `http://localhost:${config.FACADE_PORT}/v1`,
  };
}
