import type { AccountsApp } from '@trading/accounts-service';
import type { AuthApp, AuthAppConfig } from '@trading/auth-service';
import type { BankingApp } from '@trading/banking-service';
import type { OmsApp } from '@trading/oms-service';
import { type ConsumerOptions, type EventLog } from '@trading/events';
import { createLogger, type Logger } from '@trading/logging';
import type { DestinationStream } from 'pino';
import type { KeyValueStore } from '@trading/redis';
import { InternalClaimsSigner, TrustedServiceKeys, type ServiceKey, type ServiceName } from '@trading/auth';
import { Lifecycle, type RunningService, type ServicePlan } from '@trading/service';
import { openDatabases, launchContext } from './launch';
import { startAccounts, startBanking, startOms, startAuth, startGateway, startFacade } from './start-services';
import { seedDemo } from './demo-seed';
import { ensureAdminToken } from './admin-token';
import type { PlatformConfig } from './config';

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

/**
 * Every app in one process, each on its own port, wired to one another: the all-in-one mode
 * of `npm start`, and what end-to-end tests start in process.
 */
export interface PlatformOverrides {
  /** OMS variables (as the environment spells them) over the launcher's defaults, e.g. a paused price feed in tests. */
  oms?: Record<string, string>;
  /** Auth settings over the launcher's, e.g. a short webhook retry schedule in tests. */
  auth?: Partial<AuthAppConfig>;
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
