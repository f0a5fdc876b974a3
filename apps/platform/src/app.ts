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
    const { serverUrl, embedded } = await openDatabases(config, life, logger);
    const l = await launchContext(config, overrides, life, logger, serverUrl);
    const accounts = await startAccounts(l);
    const banking = await startBanking(l, accounts);
    const oms = await startOms(l, accounts, banking);
    const adminToken = config.AUTH_ADMIN_TOKEN ?? ensureAdminToken(config.PLATFORM_DATA_DIR);
    const auth = await startAuth(l, adminToken, accounts, banking, oms);
    const gateway = await startGateway(l, accounts, banking, oms, auth);
    const facade = await startFacade(l, auth, gateway);
    if (config.PLATFORM_SEED_DEMO) await seedDemo(auth.app, accounts, banking, oms.app);
    return {
      urls: {
        api: `${facade.server.public.url}/v1`,
        login: auth.server.public.url,
        authInternal: auth.server.internal.url,
        adminApi: auth.server.admin!.url,
        gateway: `${gateway.server.public.url}/graphql`,
        gatewayInternal: `${gateway.server.internal.url}/graphql`,
        accounts: `${accounts.server.internal.url}/graphql`,
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
      signerFor: (service) => new InternalClaimsSigner(l.keys[service]),
      identityOf: l.identity,
      store: l.store,
      auth: auth.app,
      oms: oms.app,
      events: { log: l.events, stream: l.streams.events },
      databaseServerUrl: serverUrl,
      embedded,
      services: { banking, accounts },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The database server (the embedded one unless DATABASE_URL names one) with a database per service. */
async function openDatabases(config: PlatformConfig, life: Lifecycle, logger: Logger): Promise<{ serverUrl: string; embedded: boolean }> {
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

type Started<A> = { app: A; server: RunningService };

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
interface Launch extends ReturnType<typeof sharedSettings> {
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

async function launchContext(
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

function startAccounts(l: Launch): Promise<SettlementService<AccountsApp>> {
  const { config } = l;
  const accountsDb = l.db('accounts');
  return l.startSettlementService({
    group: 'accounts',
    databaseUrl: accountsDb,
    listen: l.at(config.ACCOUNTS_PORT, config.ACCOUNTS_INTERNAL_PORT),
    create: (settlementConsumer) =>
      createAccountsApp(
        {
          ...l.common,
          ...l.identity('accounts'),
          ACCOUNTS_PORT: config.ACCOUNTS_PORT,
          ACCOUNTS_INTERNAL_PORT: config.ACCOUNTS_INTERNAL_PORT,
          ACCOUNTS_DATABASE_URL: accountsDb,
          ...l.database,
          ACCOUNTS_CACHE_ENTRIES: config.ACCOUNTS_CACHE_ENTRIES,
          ACCOUNT_CHANGES_STREAM: l.streams.accountChanges,
          SETTLEMENT_CLAIM_IDLE_MS: config.SETTLEMENT_CLAIM_IDLE_MS,
          EVENTS_STREAM: l.streams.events,
        },
        { logger: l.log('accounts'), events: l.events, settlementConsumer },
      ),
  });
}

function startBanking(l: Launch, accounts: SettlementService<AccountsApp>): Promise<SettlementService<BankingApp>> {
  const { config } = l;
  const accountsGraphql = `${accounts.server.internal.url}/graphql`;
  const bankingDb = l.db('banking');
  return l.startSettlementService({
    group: 'banking',
    databaseUrl: bankingDb,
    listen: l.at(config.BANKING_PORT, config.BANKING_INTERNAL_PORT),
    create: (settlementConsumer) =>
      createBankingApp(
        {
          ...l.common,
          ...l.identity('banking'),
          BANKING_PORT: config.BANKING_PORT,
          BANKING_INTERNAL_PORT: config.BANKING_INTERNAL_PORT,
          BANKING_DATABASE_URL: bankingDb,
          ...l.database,
          ACCOUNTS_URL: accountsGraphql,
          BANKING_CLEARING_DELAY_MS: 3000,
          BANKING_CLEARING_POLL_MS: 250,
          BANKING_SANDBOX: true,
          BANKING_MAX_TRANSACTION_AMOUNT: '10000000',
          BANKING_SETTLEMENT_DAYS: config.BANKING_SETTLEMENT_DAYS,
          SETTLEMENT_CLAIM_IDLE_MS: config.SETTLEMENT_CLAIM_IDLE_MS,
          EVENTS_STREAM: l.streams.events,
        },
        { logger: l.log('banking'), events: l.events, settlementConsumer, accountsGraphql: l.inProcess(() => accounts.app?.graphql) },
      ),
  });
}

async function startOms(
  l: Launch,
  accounts: SettlementService<AccountsApp>,
  banking: SettlementService<BankingApp>,
): Promise<Started<OmsApp>> {
  const { config } = l;
  const host = config.PLATFORM_BIND;
  const omsConfig = loadOmsConfig({
    LOG_LEVEL: config.LOG_LEVEL,
    REDIS_URL: config.REDIS_URL,
    LISTEN_HOST: host,
    INTERNAL_LISTEN_HOST: host,
    OMS_PORT: String(config.OMS_PORT),
    OMS_INTERNAL_PORT: String(config.OMS_INTERNAL_PORT),
    OMS_DATABASE_URL: l.db('oms'),
    ...(config.DB_STATEMENT_TIMEOUT_MS === undefined ? {} : { DB_STATEMENT_TIMEOUT_MS: String(config.DB_STATEMENT_TIMEOUT_MS) }),
    EVENTS_STREAM: l.streams.events,
    MARKET_TICKS_STREAM: l.streams.ticks,
    ACCOUNT_CHANGES_STREAM: l.streams.accountChanges,
    BANKING_URL: banking.server.internal.url,
    ACCOUNTS_URL: `${accounts.server.internal.url}/graphql`,
    OMS_MAX_OPEN_ORDERS_PER_ACCOUNT: String(config.OMS_MAX_OPEN_ORDERS_PER_ACCOUNT),
    OMS_TRADING_HOURS: config.OMS_TRADING_HOURS,
    ...l.overrides.oms,
    // The schema takes key objects as well as JSON, so the launcher hands over the ones it made.
    ...(l.identity('oms') as unknown as Record<string, string>),
  });
  return l.started(
    await createOmsApp(omsConfig, { logger: l.log('oms'), events: l.events, accountsGraphql: l.inProcess(() => accounts.app?.graphql) }),
    l.at(config.OMS_PORT, config.OMS_INTERNAL_PORT),
  );
}

async function startAuth(
  l: Launch,
  adminToken: string,
  accounts: SettlementService<AccountsApp>,
  banking: SettlementService<BankingApp>,
  oms: Started<OmsApp>,
): Promise<Started<AuthApp>> {
  const { config } = l;
  return l.started(
    await createAuthApp(
      {
        ...l.common,
        ...l.identity('auth'),
        AUTH_PORT: config.AUTH_PORT,
        AUTH_DATABASE_URL: l.db('auth'),
        ...l.database,
        AUTH_ISSUER: l.issuer,
        AUTH_API_URL: l.publicApi,
        AUTH_ADMIN_TOKEN: adminToken,
        AUTH_KEY_ENCRYPTION_KEY:
          config.AUTH_KEY_ENCRYPTION_KEY ?? ensureSecretFile(config.PLATFORM_DATA_DIR, KEY_ENCRYPTION_KEY_FILE, 'kek_'),
        PAT_SESSION_TTL_SECONDS: config.PAT_SESSION_TTL_SECONDS,
        PAT_MAX_LIVE_PER_USER: config.PAT_MAX_LIVE_PER_USER,
        OAUTH_TOKEN_MAX_REQUESTS_PER_CLIENT: config.OAUTH_TOKEN_MAX_REQUESTS_PER_CLIENT,
        // Its public listener spends the facade's address budget, in the same counters.
        OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE: config.OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE,
        API_RATE_LIMIT_NAMESPACE: l.edgeSettings.API_RATE_LIMIT_NAMESPACE,
        // One installation, one folder: its mail log lives beside its cluster and credentials.
        MAIL_LOG_FILE: join(config.PLATFORM_DATA_DIR, 'mail.log'),
        AUTH_TRUST_PROXY: [],
        ACCOUNTS_INTERNAL_URL: accounts.server.internal.url,
        BANKING_INTERNAL_URL: banking.server.internal.url,
        OMS_INTERNAL_URL: oms.server.internal.url,
      },
      { logger: l.log('auth'), store: l.store },
    ),
    { ...l.at(config.AUTH_PORT, config.AUTH_INTERNAL_PORT), admin: { port: config.AUTH_ADMIN_PORT, host: '127.0.0.1' } },
  );
}

type GatewayApp = Awaited<ReturnType<typeof createGatewayApp>>;

async function startGateway(
  l: Launch,
  accounts: SettlementService<AccountsApp>,
  banking: SettlementService<BankingApp>,
  oms: Started<OmsApp>,
  auth: Started<AuthApp>,
): Promise<Started<GatewayApp>> {
  const { config } = l;
  return l.started(
    await createGatewayApp(
      {
        ...l.common,
        ...l.identity('gateway'),
        ...l.edgeSettings,
        GATEWAY_PORT: config.GATEWAY_PORT,
        GATEWAY_INTERNAL_PORT: config.GATEWAY_INTERNAL_PORT,
        ACCOUNTS_URL: `${accounts.server.internal.url}/graphql`,
        BANKING_URL: `${banking.server.internal.url}/graphql`,
        OMS_URL: `${oms.server.internal.url}/graphql`,
        AUTH_JWKS_URL: `${auth.server.public.url}/.well-known/jwks.json`,
        AUTH_ISSUER: l.issuer,
        GATEWAY_PUBLIC_URL: [`http://localhost:${config.GATEWAY_PORT}/graphql`],
        SUPERGRAPH_PATH: require.resolve('./supergraph.graphql', {
          paths: [__dirname, `${__dirname}/../../../libs/gateway-service/src`],
        }), // bundle: copied next to main.js; source: the gateway's
        GATEWAY_TRUST_PROXY: [],
        GRAPHQL_INTROSPECTION: config.GRAPHQL_INTROSPECTION,
        GATEWAY_EXPLORER: config.GATEWAY_EXPLORER,
      },
      {
        logger: l.log('gateway'),
        store: l.store,
        subgraphs: config.PLATFORM_IN_PROCESS_CALLS
          ? { accounts: () => accounts.app?.graphql, banking: () => banking.app?.graphql, oms: () => oms.app.graphql }
          : undefined,
      },
    ),
    l.at(config.GATEWAY_PORT, config.GATEWAY_INTERNAL_PORT),
  );
}

async function startFacade(l: Launch, auth: Started<AuthApp>, gateway: Started<GatewayApp>) {
  const { config } = l;
  const facade = l.overrides.facade ?? {};
  return l.started(
    await createRestFacadeApp(
      {
        ...l.common,
        ...l.identity('rest-facade'),
        ...l.edgeSettings,
        FACADE_PORT: config.FACADE_PORT,
        FACADE_INTERNAL_PORT: config.FACADE_INTERNAL_PORT,
        GATEWAY_URL: `${gateway.server.internal.url}/graphql`,
        AUTH_INTERNAL_URL: auth.server.internal.url,
        AUTH_JWKS_URL: `${auth.server.public.url}/.well-known/jwks.json`,
        AUTH_ISSUER: l.issuer,
        FACADE_PUBLIC_URL: [l.publicApi],
        FACADE_TRUST_PROXY: [],
        OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE: config.OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE,
        EVENTS_STREAM: l.streams.events,
        ORDER_EVENTS_HEARTBEAT_MS: facade.ORDER_EVENTS_HEARTBEAT_MS ?? 15_000,
        ORDER_EVENTS_MAX_STREAMS_PER_USER: facade.ORDER_EVENTS_MAX_STREAMS_PER_USER ?? 5,
        ORDER_EVENTS_REPLAY_MAX_ENTRIES: facade.ORDER_EVENTS_REPLAY_MAX_ENTRIES ?? 20_000,
        ORDER_EVENTS_REPLAYS_PER_MINUTE: facade.ORDER_EVENTS_REPLAYS_PER_MINUTE ?? 30,
        CORS_ORIGINS_CACHE_MS: facade.CORS_ORIGINS_CACHE_MS ?? 30_000,
        // The API docs' Authorize dialog signs in as the demo app (its redirect URI: demo-start.ts).
        DOCS_OAUTH_CLIENT_ID: config.PLATFORM_SEED_DEMO ? DEMO_VENDOR_APP.clientId : undefined,
        MARKET_TICKS_STREAM: l.streams.ticks,
        MARKET_EVENTS_HEARTBEAT_MS: facade.MARKET_EVENTS_HEARTBEAT_MS ?? 15_000,
        MARKET_EVENTS_MAX_STREAMS_PER_USER: facade.MARKET_EVENTS_MAX_STREAMS_PER_USER ?? 5,
        EVENT_STREAM_LEASE_MS: facade.EVENT_STREAM_LEASE_MS ?? 15_000,
      },
      {
        logger: l.log('rest-facade'),
        store: l.store,
        events: l.events,
        gateway: l.inProcess(() => gateway.app.graphql),
        auth: l.inProcess(() => auth.app.internal),
      },
    ),
    l.at(config.FACADE_PORT, config.FACADE_INTERNAL_PORT),
  );
}

/** The demo users, accounts, positions, deposits, instruments and FX rates, each written only where it is missing. */
async function seedDemo(
  auth: AuthApp,
  accounts: SettlementService<AccountsApp>,
  banking: SettlementService<BankingApp>,
  oms: OmsApp,
): Promise<void> {
  for (const user of DEMO_USERS) if (!(await auth.users.findByEmail(user.email))) await auth.users.create(user);
  await seedAccountsDemo(accounts.app!.dataSource, { accounts: DEMO_ACCOUNTS, positions: DEMO_POSITIONS });
  await seedBankingDemo(banking.app!.dataSource, { deposits: DEMO_DEPOSITS });
  await seedOmsDemo(oms.dataSource, { instruments: DEMO_INSTRUMENTS, fxRates: DEMO_FX_RATES });
}
