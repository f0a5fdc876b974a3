import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import {
  accountsCacheSchema,
  settlementConsumerSchema,
  apiLimitSchema,
  commonSchema,
  databaseSessionSchema,
  edgeSessionSchema,
  ConfigError,
  defaultPlatformDataDir,
  field,
  loadConfig,
  z,
} from '@trading/config';
import { oauthLimitSchema } from '@trading/rest-facade-service';
import { tradingHoursSetting } from '@trading/oms-service';

/** All-in-one mode: embedded defaults, so `npm start` needs nothing set. */
const platformConfigSchema = z.object({
  LOG_LEVEL: field.logLevel().default('warn'),
  /**
   * `human`: the terminal shows what a person must read (warnings and errors, one plain line each);
   * every JSON log line goes to `<PLATFORM_DATA_DIR>/platform.log`. `json`: every line on standard
   * output, as the services write them (a container's log collector).
   */
  LOG_FORMAT: z.enum(['human', 'json'], { message: 'human or json' }).default('human'),
  /** A PostgreSQL server URL; unset = start an embedded PostgreSQL. Each service gets its own database on it. */
  DATABASE_URL: field.postgresUrl().optional(),
  REDIS_URL: field.redisUrl(),
  /** Redis behind Sentinel, or a Redis Cluster, as every service reads them (docs/operations.md). */
  REDIS_SENTINELS: commonSchema.REDIS_SENTINELS,
  REDIS_SENTINEL_NAME: commonSchema.REDIS_SENTINEL_NAME,
  REDIS_CLUSTER_NODES: commonSchema.REDIS_CLUSTER_NODES,
  /** Where the embedded PostgreSQL and the generated admin credential live (reused by the next start). */
  PLATFORM_DATA_DIR: z.string().default(() => defaultPlatformDataDir()),
  EMBEDDED_POSTGRES_PORT: field.port(54329),
  /** Prefix of the per-service database names (`<prefix>auth`, …). */
  PLATFORM_DB_PREFIX: z
    .string()
    .regex(/^[a-z_][a-z0-9_]*$|^$/, 'lower-case letters, digits and _ only')
    .default('trading_'),
  PLATFORM_SEED_DEMO: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  /**
   * Processes that each run every app, sharing the ports (Node's cluster): one per core by
   * default, so `npm start` shows the product's real speed. 1 = everything in this process
   * (also what happens without Redis: the in-process stand-in cannot be shared).
   */
  PLATFORM_WORKERS: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(() => Math.min(availableParallelism(), 8)),
  /**
   * The facade calls the gateway and auth, and the gateway the subgraphs, of its own process directly
   * (the same signed claims, checks and limits as over HTTP, without a socket per hop): the
   * apps of one process share an event loop anyway. Every listener still serves as usual.
   * `false`: every hop over its listener, as in service mode (the tracing test, to see each hop).
   */
  PLATFORM_IN_PROCESS_CALLS: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  /** The address every listener binds: this machine only, unless told otherwise (e.g. 0.0.0.0 in a container). */
  PLATFORM_BIND: field.host('127.0.0.1'),
  FACADE_PORT: field.port(8080),
  AUTH_PORT: field.port(8081),
  GATEWAY_PORT: field.port(4000),
  ACCOUNTS_PORT: field.port(4001),
  BANKING_PORT: field.port(4002),
  OMS_PORT: field.port(4003),
  /** Internal listeners (signed claims, /metrics): the public port + 100 by default. */
  FACADE_INTERNAL_PORT: field.port(8180),
  AUTH_INTERNAL_PORT: field.port(8181),
  GATEWAY_INTERNAL_PORT: field.port(4100),
  ACCOUNTS_INTERNAL_PORT: field.port(4101),
  BANKING_INTERNAL_PORT: field.port(4102),
  OMS_INTERNAL_PORT: field.port(4103),
  /** The admin API's listener; always on 127.0.0.1. */
  AUTH_ADMIN_PORT: field.port(8189),
  /** Unset: a random credential generated once per data directory, in `<PLATFORM_DATA_DIR>/admin-token` (0600), which `npm run admin` reads. */
  AUTH_ADMIN_TOKEN: z.string().min(24, 'must be at least 24 characters').optional(),
  /** Unset: generated once per data directory (`<PLATFORM_DATA_DIR>/key-encryption-key`, 0600); it encrypts auth's signing keys. */
  AUTH_KEY_ENCRYPTION_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  /** Introspection and schema hints at the gateway: on for local development. */
  GRAPHQL_INTROSPECTION: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  /** The GraphQL explorer at the gateway's GET /graphql in a browser (bundled GraphiQL): on for local development. */
  GATEWAY_EXPLORER: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  PAT_SESSION_TTL_SECONDS: field.seconds(900),
  /** Live (unrevoked, unexpired) PATs one user may hold. */
  PAT_MAX_LIVE_PER_USER: z.coerce.number().int().positive().default(50),
  /** Sale proceeds settle T+n business days (banking). */
  BANKING_SETTLEMENT_DAYS: z.coerce.number().int().min(0).max(10).default(1),
  /** Successful /oauth/token and /oauth/revoke calls per vendor app per minute (auth's own setting, passed on). */
  OAUTH_TOKEN_MAX_REQUESTS_PER_CLIENT: z.coerce.number().int().positive().default(6000),
  /** Working orders one account may hold at once (the OMS's own setting, passed on). */
  OMS_MAX_OPEN_ORDERS_PER_ACCOUNT: z.coerce.number().int().positive().default(200),
  /** The paper market's session (the OMS's own setting, passed on): `always`, or a daily UTC `HH:MM-HH:MM`. */
  OMS_TRADING_HOURS: tradingHoursSetting,
  ...apiLimitSchema,
  ...oauthLimitSchema,
  ...edgeSessionSchema,
  ...accountsCacheSchema,
  ...settlementConsumerSchema,
  /** Passed on to the four services with a database. */
  ...databaseSessionSchema,
});

export type PlatformConfig = z.output<typeof platformConfigSchema>;

/** The demo platform is for a developer's machine: it refuses to run as a production deployment. */
export const loadPlatformConfig = (env: NodeJS.ProcessEnv = process.env): PlatformConfig => {
  if (env['NODE_ENV'] === 'production') {
    throw new ConfigError('platform', [
      'NODE_ENV: the all-in-one demo platform never runs with NODE_ENV=production; run each service on its own (see docs/operations.md, "Running one service alone")',
    ]);
  }
  return loadConfig('platform', platformConfigSchema, env);
};

/** Where the all-in-one writes its JSON log lines at LOG_FORMAT=human. */
export const platformLogFile = (config: Pick<PlatformConfig, 'PLATFORM_DATA_DIR'>): string =>
  join(config.PLATFORM_DATA_DIR, 'platform.log');
