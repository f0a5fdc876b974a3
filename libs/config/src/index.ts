import { z } from 'zod';

export { z };

/** Thrown when the environment does not satisfy a service's schema; lists every problem at once. */
export class ConfigError extends Error {
  constructor(
    readonly service: string,
    readonly problems: string[],
  ) {
    super(`${service}: invalid configuration\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parses `env` against `schema` once, at start. Every bad or missing variable is reported by
 * name in a single error, so an operator fixes them all in one go. The result is frozen.
 */
export function loadConfig<S extends z.ZodType>(service: string, schema: S, env: NodeJS.ProcessEnv = process.env): Readonly<z.output<S>> {
  const parsed = schema.safeParse(env);
  if (parsed.success) {
    const problems = crossFieldProblems(parsed.data as Record<string, unknown>);
    if (problems.length) throw new ConfigError(service, problems);
  }
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const name = issue.path.join('.') || '(root)';
      // Never echo what may be a secret (a key, a token, a password, a URL with credentials).
      const given = issue.path.length === 1 && !/KEY|TOKEN|SECRET|PASSWORD|_URL$/.test(name) ? env[String(issue.path[0])] : undefined;
      return given === undefined ? `${name}: ${issue.message}` : `${name}: ${issue.message} (got "${given}")`;
    });
    throw new ConfigError(service, problems);
  }
  return Object.freeze(parsed.data);
}

/** Settings that contradict each other, whichever service reads them. */
function crossFieldProblems(config: Record<string, unknown>): string[] {
  const listed = (name: string) => Array.isArray(config[name]) && (config[name] as unknown[]).length > 0;
  return listed('REDIS_SENTINELS') && listed('REDIS_CLUSTER_NODES')
    ? ['REDIS_CLUSTER_NODES: Redis is either behind Sentinels or a Cluster; set REDIS_SENTINELS or REDIS_CLUSTER_NODES, not both']
    : [];
}

/** Shared field builders so every service spells its variables' rules the same way. */
export const field = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  url: () => z.string().url({ message: 'must be a URL' }),
  postgresUrl: () => z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL'),
  redisUrl: () =>
    z
      .string()
      .regex(/^rediss?:\/\//, 'must be a redis:// URL')
      .default('redis://127.0.0.1:6379'),
  logLevel: () => z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** A shared secret: long enough to resist guessing. */
  secret: () => z.string().min(32, 'must be at least 32 characters'),
  /** Comma-separated list, blanks dropped. */
  list: () =>
    z
      .string()
      .default('')
      .transform((s) =>
        s
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
      ),
  /** Comma-separated URLs, at least one (a service's public address, and any alias clients use). */
  urls: (fallback: string) =>
    z
      .string()
      .default(fallback)
      .transform((s) =>
        s
          .split(',')
          .map((x) => x.trim().replace(/\/+$/, ''))
          .filter(Boolean),
      )
      .pipe(z.array(z.string().url({ message: 'must be URLs' })).min(1, 'must name at least one URL')),
  seconds: (fallback: number) => z.coerce.number().int().positive().default(fallback),
  appEnv: () => z.enum(['DEV', 'UAT', 'PROD']).default('DEV'),
  /** An address to bind a listener to. */
  host: (fallback: string) => z.string().min(1).default(fallback),
  /** Comma-separated host:port list (IPv6 in brackets); absent when unset. */
  hostPorts: (name: string) =>
    z
      .string()
      .transform((s) =>
        s
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
      )
      .pipe(
        z.array(
          z
            .string()
            .regex(/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, `${name} must be host:port entries, comma-separated`)
            .refine((x) => Number(x.slice(x.lastIndexOf(':') + 1)) <= 65535, `${name} has a port above 65535`),
        ),
      )
      .transform((list) => (list.length ? list : undefined))
      .optional(),
};

/** Settings every service reads the same way (its identity keys come from `serviceIdentityFields` in @trading/auth). */
export const commonSchema = {
  LOG_LEVEL: field.logLevel(),
  REDIS_URL: field.redisUrl(),
  /**
   * Redis behind Sentinel: the Sentinels (host:port, comma-separated) and the name they know the
   * primary by; clients follow the primary they name across a failover. REDIS_URL still gives
   * the service's ACL user and password (its host is not used then).
   */
  REDIS_SENTINELS: field.hostPorts('REDIS_SENTINELS'),
  /** Unset: mymaster, Sentinel's own default. */
  REDIS_SENTINEL_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, _ . - only')
    .optional(),
  /** Redis Cluster: some of its nodes (host:port, comma-separated; one that answers is enough). Credentials as above. */
  REDIS_CLUSTER_NODES: field.hostPorts('REDIS_CLUSTER_NODES'),
  /** The public listener's address: this machine only unless told (a container sets 0.0.0.0). */
  LISTEN_HOST: field.host('127.0.0.1'),
  /** The internal listener's address: this machine only unless told; where set wider, reachable by the platform's own services only (network policy). */
  INTERNAL_LISTEN_HOST: field.host('127.0.0.1'),
};

/** How a service's PostgreSQL sessions are bounded (the services with a database: auth, accounts, banking, oms). */
export const databaseSessionSchema = {
  /**
   * A statement running longer is cancelled and its request answered 503 (try again), so no read
   * can hold a core of the database for long; migrations run without it. Unset: 5000 (libs/db
   * DATABASE_SESSION_LIMITS); 0 = no limit of ours.
   */
  DB_STATEMENT_TIMEOUT_MS: z.coerce
    .number()
    .int('must be a whole number of milliseconds')
    .min(0, 'must be 0 (no limit) or more')
    .max(600_000, 'must be at most 600000 (10 minutes)')
    .optional(),
};

/** The edges' request budgets (per token, per user, per vendor app; per address without a valid token); 0 turns a limit off (benchmarks). */
export const apiLimitSchema = {
  /** Requests per minute per token (a PAT, or one user's grant to one vendor app), shared by the facade and the gateway. */
  API_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(300),
  /** Order placements per minute per token, within the budget above. */
  API_ORDER_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(60),
  /**
   * Requests per minute per client address that present no token, or a token that fails: a flood
   * guard. Authenticated traffic is never limited by address (a vendor backend calls for thousands
   * of users from a few addresses; behind a load balancer everyone may share one).
   */
  API_ADDRESS_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(1200),
  /** Requests per minute per vendor app over all its users' grants (each grant keeps its own budget inside it). */
  API_APP_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(6000),
  /**
   * Requests per minute per user over all their tokens (PATs and app grants): more tokens buy no
   * more. Unset: 4 × API_RATE_LIMIT_PER_MINUTE. A token's own refused requests are not charged here.
   */
  API_USER_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).optional(),
  /** Order placements per minute per user over all their tokens. Unset: 4 × API_ORDER_RATE_LIMIT_PER_MINUTE. */
  API_USER_ORDER_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).optional(),
  /** Part of every counter's key: deployments sharing one Redis never count each other's requests. */
  API_RATE_LIMIT_NAMESPACE: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, _ . - only')
    .default('api'),
};
/**
 * The address budget of the endpoints that take no bearer token, shared by every listener that
 * serves them (the facade's /v1, auth's public listener): requests to /oauth/* and /pat/login per
 * client address per minute that fail (4xx) or carry no credential (GET /oauth/authorize); once
 * spent, 429 until the minute ends. Correct token traffic is never counted. 0: off. Every
 * listener must count under the same namespace, so an address gets one budget, not one each.
 */
export const oauthLimitSchema = {
  OAUTH_ADDRESS_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).max(1_000_000).default(60),
  API_RATE_LIMIT_NAMESPACE: apiLimitSchema.API_RATE_LIMIT_NAMESPACE,
};
/** How the edges (facade, gateway) check that a session is still live. */
export const edgeSessionSchema = {
  /**
   * Session records remembered in memory, on a Redis connection with client-side caching: Redis
   * tells every instance the moment a record changes or goes, so revocation stays immediate while
   * most requests skip the round trip. 0 asks Redis every time.
   */
  SESSION_CACHE_ENTRIES: z.coerce.number().int().min(0).max(10_000_000).default(50_000),
};
/** How an accounts instance keeps its users' accounts (the accounts service, the all-in-one). */
export const accountsCacheSchema = {
  /**
   * Users whose accounts an instance keeps in memory (every call that lists or checks an account
   * reads them). A trigger announces each change at commit and every instance drops it; nothing
   * is answered from memory while that is not heard. 0 reads the database every time.
   */
  ACCOUNTS_CACHE_ENTRIES: z.coerce.number().int().min(0).max(10_000_000).default(10_000),
};
/** Where accounts announces its changes to services that remember accounts (accounts writes it, the OMS reads it). */
export const accountChangesSchema = {
  ACCOUNT_CHANGES_STREAM: z.string().min(1).default('trading:accounts:changes'),
};
/** How the settlement stream's consumer groups (accounts, banking) share work across instances. */
export const settlementConsumerSchema = {
  /**
   * An entry another instance read and left unacked this long is taken over: that instance died
   * (killed, out of memory) mid-batch. Well above a handler's normal time (milliseconds); taking
   * over a slow instance's entry is safe, as each event is applied once by its id.
   */
  SETTLEMENT_CLAIM_IDLE_MS: z.coerce.number().int().min(1000).max(600_000).default(5000),
};
/**
 * How long a stopping process may take to drain, release everything and flush its traces before
 * it exits anyway, with status 1 and a log line naming the deadline: inside Kubernetes' 30 s grace
 * period less the 5 s preStop, so a close step that hangs (a data store that came back half-way,
 * a collector that never answers) never leaves a process behind to be SIGKILLed.
 */
export const STOP_DEADLINE_MS = 20_000;
export * from './platform-data';
