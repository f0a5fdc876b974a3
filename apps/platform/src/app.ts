import { join } from 'node:path';
import { createAccountsApp, seedAccountsDemo, type AccountsApp } from '@trading/accounts-service';
import { createAuthApp, type AuthApp } from '@trading/auth-service';
import { createBankingApp, seedBankingDemo, type BankingApp } from '@trading/banking-service';
import { createGatewayApp } from '@trading/gateway-service';
import { createOmsApp, loadOmsConfig, seedOmsDemo, type OmsApp } from '@trading/oms-service';
import { createRestFacadeApp } from '@trading/rest-facade-service';
import { ensureDatabase, withDatabaseName } from '@trading/db';
import { MemoryEventLog, RedisEventLog, type ConsumerOptions, type EventLog } from '@trading/events';
import { createLogger, type Logger } from '@trading/logging';
import type { DestinationStream } from 'pino';
import { connectStore, RedisStore, type KeyValueStore } from '@trading/redis';
import {
  generateServiceKey,
  InternalClaimsSigner,
  SERVICE_NAMES,
  TrustedServiceKeys,
  type ServiceKey,
  type ServiceName,
} from '@trading/auth';
import { Lifecycle, listenService, type RunningService, type ServiceApp, type ServicePlan } from '@trading/service';
import { ensureAdminToken, ensureSecretFile, KEY_ENCRYPTION_KEY_FILE } from './admin-token';
import type { PlatformConfig } from './config';
import { DEMO_ACCOUNTS, DEMO_DEPOSITS, DEMO_FX_RATES, DEMO_INSTRUMENTS, DEMO_POSITIONS, DEMO_USERS, DEMO_VENDOR_APP } from './demo-data';
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from './embedded-postgres';

export { loadPlatformConfig, type PlatformConfig } from './config';
export { DEMO_ACCOUNTS, DEMO_USERS } from './demo-data';

export interface Platform {
  /**
   * Public: api (facade), login (auth), gateway (bearer tokens). Internal (signed claims only):
   * gatewayInternal, authInternal and the subgraphs' GraphQL. adminApi: the admin listener.
   */
  urls: {
    api: string;
    login: string;
    gateway: string;
    gatewayInternal: string;
    authInternal: string;
    accounts: string;
    banking: string;
    oms: string;
    adminApi: string;
  };
  /** Every service's internal listener (base URL): /metrics, the detailed /readyz. */
  internalUrls: Record<ServiceName, string>;
  /** The admin API's credential (generated per data directory unless AUTH_ADMIN_TOKEN was set). */
  adminToken: string;
  /** Signs internal claims as one of the platform's services would (tests of the internal listeners). */
  signerFor(service: ServiceName): InternalClaimsSigner;
  /** A service's identity config (its key, the trusted keys), to start another instance of it beside the platform. */
  identityOf(service: ServiceName): { SERVICE_KEY: ServiceKey; SERVICE_TRUSTED_KEYS: TrustedServiceKeys };
  store: KeyValueStore;
  auth: AuthApp;
  /** The OMS with its workers (price feed, execution engine, outbox relay), for tests and tools. */
  oms: OmsApp;
  /** The settlement stream every app of this process shares. */
  events: { log: EventLog; stream: string };
  /** Where the databases live (embedded or the given server). */
  databaseServerUrl: string;
  embedded: boolean;
  /** The two settlement consumers' services (how they were started: see `PlatformOverrides.startSettlementService`). */
  services: { banking: SettlementService<BankingApp>; accounts: SettlementService<AccountsApp> };
  close(): Promise<void>;
}

/** One of the two services that consume the settlement stream (accounts, banking), as the launcher describes it. */
export interface SettlementServiceSpec<A extends BankingApp | AccountsApp> {
  /** Its consumer group on the settlement stream. */
  group: 'accounts' | 'banking';
  databaseUrl: string;
  listen: ServicePlan['listen'];
  /** Makes a new instance; `consumer` names its settlement consumer (default: one per host and pid). */
  create(consumer?: Pick<ConsumerOptions, 'consumer' | 'claimIdleMs'>): Promise<A>;
}

/** A settlement service once started: the instance running now and its listeners. */
export interface SettlementService<A extends BankingApp | AccountsApp> {
  readonly app: A | undefined;
  readonly server: RunningService;
  close(): Promise<void>;
}

/** How the launcher starts accounts and banking: by default once; crash tests start them so they can be killed and started again. */
export type StartSettlementService = <A extends BankingApp | AccountsApp>(spec: SettlementServiceSpec<A>) => Promise<SettlementService<A>>;

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

/**
 * Every app in one process, each on its own port, wired to one another: the all-in-one mode
 * of `npm start`, and what end-to-end tests start in process.
 */
export interface PlatformOverrides {
  /** OMS variables (as the environment spells them) over the launcher's defaults, e.g. a paused price feed in tests. */
  oms?: Record<string, string>;
  /** The facade's live order events: a short heartbeat in tests of session revocation. */
  facade?: {
    ORDER_EVENTS_HEARTBEAT_MS?: number;
    ORDER_EVENTS_MAX_STREAMS_PER_USER?: number;
    ORDER_EVENTS_REPLAY_MAX_ENTRIES?: number;
    ORDER_EVENTS_REPLAYS_PER_MINUTE?: number;
    CORS_ORIGINS_CACHE_MS?: number;
    MARKET_EVENTS_HEARTBEAT_MS?: number;
    MARKET_EVENTS_MAX_STREAMS_PER_USER?: number;
    EVENT_STREAM_LEASE_MS?: number;
  };
  /** Where every app's log lines go (default stdout), e.g. a test reading what was logged. */
  logDestination?: DestinationStream;
  /** How accounts and banking are started (default `startOnce`). */
  startSettlementService?: StartSettlementService;
  /**
   * The services' identities; default: fresh ones. `npm start` passes the installation's (service-identities.ts):
   * every process of one platform (npm start on every core) and every start of it share one set.
   */
  serviceKeys?: Record<ServiceName, ServiceKey>;
}

export async function createPlatform(
  config: PlatformConfig,
  logger: Logger = createLogger('platform', config.LOG_LEVEL),
  overrides: PlatformOverrides = {},
): Promise<Platform> {
  // Closed in reverse, past a step that fails (logged); a step slow to close is named in the log.
  const life = Lifecycle.of('platform', logger);
  const close = () => life.close().catch((err) => logger.error({ err }, 'shutdown step failed'));
  try {
    let pg: EmbeddedPostgresServer | undefined;
    if (!config.DATABASE_URL) {
      pg = await startEmbeddedPostgres(config.PLATFORM_DATA_DIR, config.EMBEDDED_POSTGRES_PORT, logger);
      life.defer('embedded PostgreSQL', () => pg!.stop());
    }
    const serverUrl = config.DATABASE_URL ?? pg!.url;
    const db = (service: string) => withDatabaseName(serverUrl, `${config.PLATFORM_DB_PREFIX}${service}`);
    for (const service of ['auth', 'accounts', 'banking', 'oms']) await ensureDatabase(db(service));

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
    const eventsStream = `${config.PLATFORM_DB_PREFIX}oms:events`;
    // Price changes for live quotes: a capped stream beside it (the same log, so the in-process one without Redis too).
    const ticksStream = `${config.PLATFORM_DB_PREFIX}market:ticks`;
    // Accounts' changes, for the OMS's memory of accounts.
    const accountChangesStream = `${config.PLATFORM_DB_PREFIX}accounts:changes`;

    // Each service has its own key and all trust each other's public keys. `npm start` hands over the
    // installation's (kept in its data directory: service-identities.ts), so what the OMS signed before a
    // restart is still verified after it; without them (tests in one process) fresh ones.
    const keys =
      overrides.serviceKeys ??
      (Object.fromEntries(SERVICE_NAMES.map((s) => [s, generateServiceKey(s)])) as Record<ServiceName, ServiceKey>);
    const trusted = TrustedServiceKeys.of(...Object.values(keys));
    const identity = (service: ServiceName) => ({ SERVICE_KEY: keys[service], SERVICE_TRUSTED_KEYS: trusted });
    const host = config.PLATFORM_BIND;
    const at = (port: number, internalPort: number): ServicePlan['listen'] => ({
      public: { port, host },
      internal: { port: internalPort, host },
    });

    const started = async <A extends ServiceApp>(app: A, addresses: ServicePlan['listen']): Promise<{ app: A; server: RunningService }> => {
      life.defer(app.name, () => app.close());
      const server = await listenService(app, addresses);
      life.defer(`${app.name} listeners`, () => server.close());
      return { app, server };
    };
    const common = { LOG_LEVEL: config.LOG_LEVEL, REDIS_URL: config.REDIS_URL, LISTEN_HOST: host, INTERNAL_LISTEN_HOST: host };
    // What the services with a database (accounts, banking, oms, auth) take besides `common`.
    const database = { DB_STATEMENT_TIMEOUT_MS: config.DB_STATEMENT_TIMEOUT_MS };
    const edgeSettings = {
      API_RATE_LIMIT_PER_MINUTE: config.API_RATE_LIMIT_PER_MINUTE,
      API_ORDER_RATE_LIMIT_PER_MINUTE: config.API_ORDER_RATE_LIMIT_PER_MINUTE,
      API_ADDRESS_RATE_LIMIT_PER_MINUTE: config.API_ADDRESS_RATE_LIMIT_PER_MINUTE,
      API_USER_RATE_LIMIT_PER_MINUTE: config.API_USER_RATE_LIMIT_PER_MINUTE,
      API_APP_RATE_LIMIT_PER_MINUTE: config.API_APP_RATE_LIMIT_PER_MINUTE,
      API_USER_ORDER_RATE_LIMIT_PER_MINUTE: config.API_USER_ORDER_RATE_LIMIT_PER_MINUTE,
      API_RATE_LIMIT_NAMESPACE: `${config.PLATFORM_DB_PREFIX}api`,
      SESSION_CACHE_ENTRIES: config.SESSION_CACHE_ENTRIES, // the apps share `store`, which caches as this says
    };
    const log = (name: string) => createLogger(name, config.LOG_LEVEL, overrides.logDestination);

    // A peer of this process, called without a socket unless PLATFORM_IN_PROCESS_CALLS=false.
    const inProcess = <T>(endpoint: () => T | undefined) => (config.PLATFORM_IN_PROCESS_CALLS ? endpoint : undefined);
    const startSettlementService = async <A extends BankingApp | AccountsApp>(spec: SettlementServiceSpec<A>) => {
      const service = await (overrides.startSettlementService ?? startOnce)(spec);
      life.defer(`${spec.group} (with its listeners)`, () => service.close());
      return service;
    };
    const accountsDb = db('accounts');
    const accounts = await startSettlementService({
      group: 'accounts',
      databaseUrl: accountsDb,
      listen: at(config.ACCOUNTS_PORT, config.ACCOUNTS_INTERNAL_PORT),
      create: (settlementConsumer) =>
        createAccountsApp(
          {
            ...common,
            ...identity('accounts'),
            ACCOUNTS_PORT: config.ACCOUNTS_PORT,
            ACCOUNTS_INTERNAL_PORT: config.ACCOUNTS_INTERNAL_PORT,
            ACCOUNTS_DATABASE_URL: accountsDb,
            ...database,
            ACCOUNTS_CACHE_ENTRIES: config.ACCOUNTS_CACHE_ENTRIES,
            ACCOUNT_CHANGES_STREAM: accountChangesStream,
            SETTLEMENT_CLAIM_IDLE_MS: config.SETTLEMENT_CLAIM_IDLE_MS,
            EVENTS_STREAM: eventsStream,
          },
          { logger: log('accounts'), events, settlementConsumer },
        ),
    });
    const accountsGraphql = `${accounts.server.internal.url}/graphql`;
    const bankingDb = db('banking');
    const banking = await startSettlementService({
      group: 'banking',
      databaseUrl: bankingDb,
      listen: at(config.BANKING_PORT, config.BANKING_INTERNAL_PORT),
      create: (settlementConsumer) =>
        createBankingApp(
          {
            ...common,
            ...identity('banking'),
            BANKING_PORT: config.BANKING_PORT,
            BANKING_INTERNAL_PORT: config.BANKING_INTERNAL_PORT,
            BANKING_DATABASE_URL: bankingDb,
            ...database,
            ACCOUNTS_URL: accountsGraphql,
            BANKING_CLEARING_DELAY_MS: 3000,
            BANKING_CLEARING_POLL_MS: 250,
            BANKING_SANDBOX: true,
            BANKING_MAX_TRANSACTION_AMOUNT: '10000000',
            BANKING_SETTLEMENT_DAYS: config.BANKING_SETTLEMENT_DAYS,
            SETTLEMENT_CLAIM_IDLE_MS: config.SETTLEMENT_CLAIM_IDLE_MS,
            EVENTS_STREAM: eventsStream,
          },
          { logger: log('banking'), events, settlementConsumer, accountsGraphql: inProcess(() => accounts.app?.graphql) },
        ),
    });
    const omsConfig = loadOmsConfig({
      LOG_LEVEL: config.LOG_LEVEL,
      REDIS_URL: config.REDIS_URL,
      LISTEN_HOST: host,
      INTERNAL_LISTEN_HOST: host,
      OMS_PORT: String(config.OMS_PORT),
      OMS_INTERNAL_PORT: String(config.OMS_INTERNAL_PORT),
      OMS_DATABASE_URL: db('oms'),
      ...(config.DB_STATEMENT_TIMEOUT_MS === undefined ? {} : { DB_STATEMENT_TIMEOUT_MS: String(config.DB_STATEMENT_TIMEOUT_MS) }),
      EVENTS_STREAM: eventsStream,
      MARKET_TICKS_STREAM: ticksStream,
      ACCOUNT_CHANGES_STREAM: accountChangesStream,
      BANKING_URL: banking.server.internal.url,
      ACCOUNTS_URL: accountsGraphql,
      OMS_MAX_OPEN_ORDERS_PER_ACCOUNT: String(config.OMS_MAX_OPEN_ORDERS_PER_ACCOUNT),
      OMS_TRADING_HOURS: config.OMS_TRADING_HOURS,
      ...overrides.oms,
      // The schema takes key objects as well as JSON, so the launcher hands over the ones it made.
      ...(identity('oms') as unknown as Record<string, string>),
    });
    const oms = await started(
      await createOmsApp(omsConfig, { logger: log('oms'), events, accountsGraphql: inProcess(() => accounts.app?.graphql) }),
      at(config.OMS_PORT, config.OMS_INTERNAL_PORT),
    );

    // The auth port must be known before its issuer is: listen first on the configured port.
    const issuer = `http://localhost:${config.AUTH_PORT}`;
    // The public URLs as clients on this machine call them: DPoP proofs name them (`htu`). With
    // port 0 (most tests) they are not known before listening; a DPoP spec chooses its ports.
    const publicApi = `http://localhost:${config.FACADE_PORT}/v1`;
    const adminToken = config.AUTH_ADMIN_TOKEN ?? ensureAdminToken(config.PLATFORM_DATA_DIR);
    const auth = await started(
      await createAuthApp(
        {
          ...common,
          ...identity('auth'),
          AUTH_PORT: config.AUTH_PORT,
          AUTH_DATABASE_URL: db('auth'),
          ...database,
          AUTH_ISSUER: issuer,
          AUTH_API_URL: publicApi,
          AUTH_ADMIN_TOKEN: adminToken,
          AUTH_KEY_ENCRYPTION_KEY:
            config.AUTH_KEY_ENCRYPTION_KEY ?? ensureSecretFile(config.PLATFORM_DATA_DIR, KEY_ENCRYPTION_KEY_FILE, 'kek_'),
          PAT_SESSION_TTL_SECONDS: config.PAT_SESSION_TTL_SECONDS,
          PAT_MAX_LIVE_PER_USER: config.PAT_MAX_LIVE_PER_USER,
          OAUTH_TOKEN_MAX_REQUESTS_PER_CLIENT: config.OAUTH_TOKEN_MAX_REQUESTS_PER_CLIENT,
          // Its public listener spends the facade's address budget, in the same counters.
          OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE: config.OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE,
          API_RATE_LIMIT_NAMESPACE: edgeSettings.API_RATE_LIMIT_NAMESPACE,
          // One installation, one folder: its mail log lives beside its cluster and credentials.
          MAIL_LOG_FILE: join(config.PLATFORM_DATA_DIR, 'mail.log'),
          AUTH_TRUST_PROXY: [],
          ACCOUNTS_INTERNAL_URL: accounts.server.internal.url,
          BANKING_INTERNAL_URL: banking.server.internal.url,
          OMS_INTERNAL_URL: oms.server.internal.url,
        },
        { logger: log('auth'), store },
      ),
      { ...at(config.AUTH_PORT, config.AUTH_INTERNAL_PORT), admin: { port: config.AUTH_ADMIN_PORT, host: '127.0.0.1' } },
    );
    const authUrl = auth.server.public.url;
    const jwks = `${authUrl}/.well-known/jwks.json`;

    const gateway = await started(
      await createGatewayApp(
        {
          ...common,
          ...identity('gateway'),
          ...edgeSettings,
          GATEWAY_PORT: config.GATEWAY_PORT,
          GATEWAY_INTERNAL_PORT: config.GATEWAY_INTERNAL_PORT,
          ACCOUNTS_URL: accountsGraphql,
          BANKING_URL: `${banking.server.internal.url}/graphql`,
          OMS_URL: `${oms.server.internal.url}/graphql`,
          AUTH_JWKS_URL: jwks,
          AUTH_ISSUER: issuer,
          GATEWAY_PUBLIC_URL: [`http://localhost:${config.GATEWAY_PORT}/graphql`],
          SUPERGRAPH_PATH: require.resolve('./supergraph.graphql', {
            paths: [__dirname, `${__dirname}/../../../libs/gateway-service/src`],
          }), // bundle: copied next to main.js; source: the gateway's
          GATEWAY_TRUST_PROXY: [],
          GRAPHQL_INTROSPECTION: config.GRAPHQL_INTROSPECTION,
          GATEWAY_EXPLORER: config.GATEWAY_EXPLORER,
        },
        {
          logger: log('gateway'),
          store,
          subgraphs: config.PLATFORM_IN_PROCESS_CALLS
            ? { accounts: () => accounts.app?.graphql, banking: () => banking.app?.graphql, oms: () => oms.app.graphql }
            : undefined,
        },
      ),
      at(config.GATEWAY_PORT, config.GATEWAY_INTERNAL_PORT),
    );
    const facade = await started(
      await createRestFacadeApp(
        {
          ...common,
          ...identity('rest-facade'),
          ...edgeSettings,
          FACADE_PORT: config.FACADE_PORT,
          FACADE_INTERNAL_PORT: config.FACADE_INTERNAL_PORT,
          GATEWAY_URL: `${gateway.server.internal.url}/graphql`,
          AUTH_INTERNAL_URL: auth.server.internal.url,
          AUTH_JWKS_URL: jwks,
          AUTH_ISSUER: issuer,
          FACADE_PUBLIC_URL: [publicApi],
          FACADE_TRUST_PROXY: [],
          OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE: config.OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE,
          EVENTS_STREAM: eventsStream,
          ORDER_EVENTS_HEARTBEAT_MS: overrides.facade?.ORDER_EVENTS_HEARTBEAT_MS ?? 15_000,
          ORDER_EVENTS_MAX_STREAMS_PER_USER: overrides.facade?.ORDER_EVENTS_MAX_STREAMS_PER_USER ?? 5,
          ORDER_EVENTS_REPLAY_MAX_ENTRIES: overrides.facade?.ORDER_EVENTS_REPLAY_MAX_ENTRIES ?? 20_000,
          ORDER_EVENTS_REPLAYS_PER_MINUTE: overrides.facade?.ORDER_EVENTS_REPLAYS_PER_MINUTE ?? 30,
          CORS_ORIGINS_CACHE_MS: overrides.facade?.CORS_ORIGINS_CACHE_MS ?? 30_000,
          // The API docs' Authorize dialog signs in as the demo app (its redirect URI: demo-start.ts).
          DOCS_OAUTH_CLIENT_ID: config.PLATFORM_SEED_DEMO ? DEMO_VENDOR_APP.clientId : undefined,
          MARKET_TICKS_STREAM: ticksStream,
          MARKET_EVENTS_HEARTBEAT_MS: overrides.facade?.MARKET_EVENTS_HEARTBEAT_MS ?? 15_000,
          MARKET_EVENTS_MAX_STREAMS_PER_USER: overrides.facade?.MARKET_EVENTS_MAX_STREAMS_PER_USER ?? 5,
          EVENT_STREAM_LEASE_MS: overrides.facade?.EVENT_STREAM_LEASE_MS ?? 15_000,
        },
        {
          logger: log('rest-facade'),
          store,
          events,
          gateway: inProcess(() => gateway.app.graphql),
          auth: inProcess(() => auth.app.internal),
        },
      ),
      at(config.FACADE_PORT, config.FACADE_INTERNAL_PORT),
    );

    if (config.PLATFORM_SEED_DEMO) {
      for (const user of DEMO_USERS) if (!(await auth.app.users.findByEmail(user.email))) await auth.app.users.create(user);
      await seedAccountsDemo(accounts.app!.dataSource, { accounts: DEMO_ACCOUNTS, positions: DEMO_POSITIONS });
      await seedBankingDemo(banking.app!.dataSource, { deposits: DEMO_DEPOSITS });
      await seedOmsDemo(oms.app.dataSource, { instruments: DEMO_INSTRUMENTS, fxRates: DEMO_FX_RATES });
    }

    return {
      urls: {
        api: `${facade.server.public.url}/v1`,
        login: authUrl,
        authInternal: auth.server.internal.url,
        adminApi: auth.server.admin!.url,
        gateway: `${gateway.server.public.url}/graphql`,
        gatewayInternal: `${gateway.server.internal.url}/graphql`,
        accounts: accountsGraphql,
        banking: `${banking.server.internal.url}/graphql`,
        oms: `${oms.server.internal.url}/graphql`,
      },
      internalUrls: {
        'rest-facade': facade.server.internal.url,
        auth: auth.server.internal.url,
        gateway: gateway.server.internal.url,
        accounts: accounts.server.internal.url,
        banking: banking.server.internal.url,
        oms: oms.server.internal.url,
      },
      adminToken,
      signerFor: (service) => new InternalClaimsSigner(keys[service]),
      identityOf: identity,
      store,
      auth: auth.app,
      oms: oms.app,
      events: { log: events, stream: eventsStream },
      databaseServerUrl: serverUrl,
      embedded: !!pg,
      services: { banking, accounts },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
