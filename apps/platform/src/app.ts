import { Client } from 'pg';
import { createAccountsApp, seedAccountsDemo, type AccountsApp } from '@trading/app-accounts';
import { createAuthApp, type AuthApp } from '@trading/app-auth';
import { createBankingApp, seedBankingDemo, type BankingApp } from '@trading/app-banking';
import { createGatewayApp } from '@trading/app-gateway';
import { createOmsApp, loadOmsConfig, seedOmsDemo, type OmsApp } from '@trading/app-oms';
import { createRestFacadeApp } from '@trading/app-rest-facade';
import { ensureDatabase, withDatabaseName } from '@trading/db';
import { MemoryEventLog, RedisEventLog, type ConsumerOptions, type EventLog } from '@trading/events';
import { createLogger, type Logger } from '@trading/logging';
import { connectStore, RedisStore, type KeyValueStore } from '@trading/redis';
import { listen, type RunningServer, type ServiceApp } from '@trading/service';
import type { PlatformConfig } from './config';
import { DEMO_ACCOUNTS, DEMO_DEPOSITS, DEMO_FX_RATES, DEMO_INSTRUMENTS, DEMO_POSITIONS, DEMO_USERS } from './demo-data';
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from './embedded-postgres';

export { loadPlatformConfig, type PlatformConfig } from './config';
export { DEMO_ACCOUNTS, DEMO_USERS } from './demo-data';

export interface Platform {
  urls: { api: string; login: string; gateway: string; accounts: string; banking: string; oms: string; adminApi: string };
  store: KeyValueStore;
  auth: AuthApp;
  /** The OMS with its workers (price feed, execution engine, outbox relay), for tests and tools. */
  oms: OmsApp;
  /** The settlement stream every app of this process shares. */
  events: { log: EventLog; stream: string };
  /** Where the databases live (embedded or the given server). */
  databaseServerUrl: string;
  embedded: boolean;
  /** The two settlement consumers' apps, which crash tests kill and start again. */
  services: { banking: CrashableService<BankingApp>; accounts: CrashableService<AccountsApp> };
  close(): Promise<void>;
}

/**
 * A service of the platform that can be killed and started again in process, for crash tests:
 * a new instance gets the same configuration (database, settlement stream and consumer group)
 * and listens on the same port, so the apps that call it need no change.
 */
export interface CrashableService<A extends BankingApp | AccountsApp> {
  /** The instance running now (a new one after `restart`); undefined between `crash` and `restart`. */
  readonly app: A | undefined;
  /** Its consumer group on the settlement stream. */
  readonly group: string;
  /**
   * Kills the running instance as abruptly as can be done in process: its port stops answering
   * (open connections cut), its settlement consumer stops at once and acks nothing more, and
   * every other session on its database is terminated, so a transaction in flight rolls back
   * and the event it was applying stays pending. Then what is left of it is released.
   */
  crash(): Promise<void>;
  /** Starts a new instance; by default under the dead one's consumer name, so it reads its pending entries first. */
  restart(consumer?: Pick<ConsumerOptions, 'consumer' | 'claimIdleMs'>): Promise<void>;
}

/**
 * Every app in one process, each on its own port, wired to one another: the all-in-one mode
 * of `npm start`, and what end-to-end tests start in process.
 */
export interface PlatformOverrides {
  /** OMS variables (as the environment spells them) over the launcher's defaults, e.g. a paused price feed in tests. */
  oms?: Record<string, string>;
}

export async function createPlatform(config: PlatformConfig, logger: Logger = createLogger('platform', config.LOG_LEVEL), overrides: PlatformOverrides = {}): Promise<Platform> {
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const fn of closers.reverse()) await fn().catch((err) => logger.error({ err }, 'shutdown step failed'));
  };
  try {
    let pg: EmbeddedPostgresServer | undefined;
    if (!config.DATABASE_URL) {
      pg = await startEmbeddedPostgres(config.PLATFORM_DATA_DIR, config.EMBEDDED_POSTGRES_PORT, logger);
      closers.push(() => pg!.stop());
    }
    const serverUrl = config.DATABASE_URL ?? pg!.url;
    const db = (service: string) => withDatabaseName(serverUrl, `${config.PLATFORM_DB_PREFIX}${service}`);
    for (const service of ['auth', 'accounts', 'banking', 'oms']) await ensureDatabase(db(service));

    // One store for every app: with real Redis that changes nothing; with the in-process
    // stand-in it is what lets the facade see the sessions auth creates.
    const store = await connectStore(config.REDIS_URL, {
      fallbackToMemory: true,
      onFallback: (reason) => logger.warn(`${reason}: using an in-process store (sessions and limits live only in this process)`),
    });
    closers.push(() => store.close());
    // Settlement events: Redis streams on the same Redis, or an in-process log every app shares.
    const events: EventLog = store instanceof RedisStore ? new RedisEventLog(store.client) : new MemoryEventLog();
    closers.push(() => events.close());
    const eventsStream = `${config.PLATFORM_DB_PREFIX}oms:events`;

    const started = async <A extends ServiceApp>(app: A, port: number): Promise<{ app: A; server: RunningServer }> => {
      closers.push(() => app.close());
      const server = await listen(app.app, port);
      closers.push(() => server.close());
      return { app, server };
    };
    const common = { LOG_LEVEL: config.LOG_LEVEL, REDIS_URL: config.REDIS_URL, INTERNAL_SIGNING_KEY: config.INTERNAL_SIGNING_KEY };
    const log = (name: string) => createLogger(name, config.LOG_LEVEL);

    // Accounts and banking can be killed and started again (crash tests): the closer stops whichever instance runs.
    const crashable = async <A extends BankingApp | AccountsApp>(
      group: string,
      databaseUrl: string,
      create: (consumer?: Pick<ConsumerOptions, 'consumer' | 'claimIdleMs'>) => Promise<A>,
      port: number,
    ): Promise<{ server: RunningServer; service: CrashableService<A> }> => {
      let current: { app: A; server: RunningServer } | undefined;
      closers.push(async () => {
        const running = current;
        current = undefined;
        if (running) {
          await running.server.close();
          await running.app.close();
        }
      });
      const start = async (at: number, consumer?: Pick<ConsumerOptions, 'consumer' | 'claimIdleMs'>, again = false) => {
        const app = await create(consumer);
        try {
          current = { app, server: again ? await listenAgain(app, at) : await listen(app.app, at) };
        } catch (err) {
          await app.close();
          throw err;
        }
        return current.server;
      };
      const server = await start(port);
      const service: CrashableService<A> = {
        get app() {
          return current?.app;
        },
        group,
        crash: async () => {
          const dead = current;
          if (!dead) throw new Error(`${group} is not running`);
          current = undefined;
          const closed = new Promise<void>((done) => dead.server.server.close(() => done()));
          dead.server.server.closeAllConnections();
          dead.app.settlementConsumer.abort();
          try {
            await terminateSessions(databaseUrl);
          } finally {
            await dead.app.close().catch((err) => logger.debug({ err }, `${group}: releasing the crashed instance`));
            await closed;
          }
        },
        restart: async (consumer) => {
          if (current) throw new Error(`${group} is running`);
          await start(server.port, consumer, true);
        },
      };
      return { server, service };
    };
    const accountsDb = db('accounts');
    const accounts = await crashable(
      'accounts',
      accountsDb,
      (settlementConsumer) =>
        createAccountsApp({ ...common, ACCOUNTS_PORT: config.ACCOUNTS_PORT, ACCOUNTS_DATABASE_URL: accountsDb, EVENTS_STREAM: eventsStream }, { logger: log('accounts'), events, settlementConsumer }),
      config.ACCOUNTS_PORT,
    );
    const bankingDb = db('banking');
    const banking = await crashable(
      'banking',
      bankingDb,
      (settlementConsumer) =>
        createBankingApp(
          {
            ...common,
            BANKING_PORT: config.BANKING_PORT,
            BANKING_DATABASE_URL: bankingDb,
            ACCOUNTS_URL: `${accounts.server.url}/graphql`,
            BANKING_CLEARING_DELAY_MS: 3000,
            BANKING_CLEARING_POLL_MS: 250,
            BANKING_SANDBOX: true,
            EVENTS_STREAM: eventsStream,
          },
          { logger: log('banking'), events, settlementConsumer },
        ),
      config.BANKING_PORT,
    );
    const omsConfig = loadOmsConfig({
      LOG_LEVEL: config.LOG_LEVEL,
      REDIS_URL: config.REDIS_URL,
      INTERNAL_SIGNING_KEY: config.INTERNAL_SIGNING_KEY,
      OMS_PORT: String(config.OMS_PORT),
      OMS_DATABASE_URL: db('oms'),
      EVENTS_STREAM: eventsStream,
      BANKING_URL: banking.server.url,
      ACCOUNTS_URL: `${accounts.server.url}/graphql`,
      ...overrides.oms,
    });
    const oms = await started(await createOmsApp(omsConfig, { logger: log('oms'), events }), config.OMS_PORT);

    // The auth port must be known before its issuer is: listen first on the configured port.
    const issuer = `http://localhost:${config.AUTH_PORT}`;
    const auth = await started(
      await createAuthApp(
        {
          ...common,
          AUTH_PORT: config.AUTH_PORT,
          AUTH_DATABASE_URL: db('auth'),
          AUTH_ISSUER: issuer,
          AUTH_ADMIN_TOKEN: config.AUTH_ADMIN_TOKEN,
          PAT_SESSION_TTL_SECONDS: config.PAT_SESSION_TTL_SECONDS,
          AUTH_TRUST_PROXY: ['loopback'],
        },
        { logger: log('auth'), store },
      ),
      config.AUTH_PORT,
    );
    const authUrl = auth.server.url;
    const jwks = `${authUrl}/.well-known/jwks.json`;

    const gateway = await started(
      await createGatewayApp(
        {
          ...common,
          GATEWAY_PORT: config.GATEWAY_PORT,
          ACCOUNTS_URL: `${accounts.server.url}/graphql`,
          BANKING_URL: `${banking.server.url}/graphql`,
          OMS_URL: `${oms.server.url}/graphql`,
          AUTH_JWKS_URL: jwks,
          AUTH_ISSUER: issuer,
          SUPERGRAPH_PATH: require.resolve('./supergraph.graphql', { paths: [__dirname, `${__dirname}/../../gateway/src`] }), // bundle: copied next to main.js; source: the gateway's
          GATEWAY_TRUST_PROXY: [],
        },
        { logger: log('gateway'), store },
      ),
      config.GATEWAY_PORT,
    );
    const facade = await started(
      await createRestFacadeApp(
        { ...common, FACADE_PORT: config.FACADE_PORT, GATEWAY_URL: `${gateway.server.url}/graphql`, AUTH_URL: authUrl, AUTH_JWKS_URL: jwks, AUTH_ISSUER: issuer, FACADE_TRUST_PROXY: [] },
        { logger: log('rest-facade'), store },
      ),
      config.FACADE_PORT,
    );

    if (config.PLATFORM_SEED_DEMO) {
      for (const user of DEMO_USERS) if (!(await auth.app.users.findByEmail(user.email))) await auth.app.users.create(user);
      await seedAccountsDemo(accounts.service.app!.dataSource, { accounts: DEMO_ACCOUNTS, positions: DEMO_POSITIONS });
      await seedBankingDemo(banking.service.app!.dataSource, { deposits: DEMO_DEPOSITS });
      await seedOmsDemo(oms.app.dataSource, { instruments: DEMO_INSTRUMENTS, fxRates: DEMO_FX_RATES });
    }

    return {
      urls: {
        api: `${facade.server.url}/v1`,
        login: authUrl,
        adminApi: authUrl,
        gateway: `${gateway.server.url}/graphql`,
        accounts: `${accounts.server.url}/graphql`,
        banking: `${banking.server.url}/graphql`,
        oms: `${oms.server.url}/graphql`,
      },
      store,
      auth: auth.app,
      oms: oms.app,
      events: { log: events, stream: eventsStream },
      databaseServerUrl: serverUrl,
      embedded: !!pg,
      services: { banking: banking.service, accounts: accounts.service },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Listens again on the port a crashed instance gave up, which may take a moment to be free. */
async function listenAgain(service: ServiceApp, port: number): Promise<RunningServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await listen(service.app, port);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 20) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Cuts every session on the database at `url` but this one (what a killed process leaves PostgreSQL to do). */
async function terminateSessions(url: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
  } finally {
    await client.end();
  }
}
