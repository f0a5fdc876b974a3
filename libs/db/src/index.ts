import { Client } from 'pg';
import { DataSource, MigrationExecutor, type EntitySchema, type MixedList } from 'typeorm';

export { DataSource };
export interface DatabaseOptions {
  url: string;
  entities: MixedList<EntitySchema | (new () => unknown)>;
  migrations: MixedList<new () => unknown>;
  /** Pool size per service instance. */
  poolSize?: number;
  /** How long the pool's sessions may wait or stall; DATABASE_SESSION_LIMITS unless a test shortens them. */
  limits?: Partial<DatabaseSessionLimits>;
  /**
   * The service's own settings, sent with every pooled session's start (`-c name=value`), for
   * rules the database enforces itself: e.g. `oms.max_open_orders`, read by the OMS's trigger.
   */
  settings?: Record<string, string>;
}

interface DatabaseSessionLimits {
  /** A statement waiting this long for a row or table lock fails (55P03) instead of waiting for ever. */
  lockTimeoutMs: number;
  /** PostgreSQL ends a session left idle inside a transaction this long (25P03), releasing its locks. */
  idleInTransactionMs: number;
  /** Waiting this long for a pooled connection (pool exhausted, or the server not answering) fails the request. */
  acquireTimeoutMs: number;
  /**
   * A statement running this long is cancelled (57014), so no read, however it was asked for, can
   * hold a core of the database for long; 0 = no limit. Migrations run without it.
   */
  statementTimeoutMs: number;
}

/**
 * Every pooled session's limits. A request, an engine pass or a relay pass must never wait for
 * ever: one waiting on a lock that a stalled session holds (an operator's open transaction, a
 * client that died mid-transaction, a bug) would hold its pass, every pass after it and the
 * service's shutdown. Our own transactions last milliseconds, so seconds are generous; a
 * migration that cannot take its lock in time fails and the instance retries on restart, rather
 * than queueing all traffic behind its lock. A statement is cancelled after 5 s (each service's
 * DB_STATEMENT_TIMEOUT_MS), except in migrations, which may rightly run long (building a new
 * table from a big one).
 */
const DATABASE_SESSION_LIMITS: DatabaseSessionLimits = {
  lockTimeoutMs: 5_000,
  idleInTransactionMs: 30_000,
  acquireTimeoutMs: 10_000,
  statementTimeoutMs: 5_000,
};

/**
 * Opens a service's DataSource and brings its schema up to date. Migrations run under a
 * PostgreSQL advisory lock so that several instances starting together migrate exactly once.
 * `synchronize` stays off: schemas change only through migrations.
 */
export async function openDatabase(options: DatabaseOptions): Promise<DataSource> {
  const dataSource = new DataSource({
    type: 'postgres',
    url: options.url,
    entities: options.entities,
    migrations: options.migrations,
    synchronize: false,
    migrationsRun: false,
    extra: {
      max: options.poolSize ?? 10,
      ...sessionSettings({ ...DATABASE_SESSION_LIMITS, ...options.limits }),
      options: startupOptions(options.settings ?? {}),
    },
  });
  await dataSource.initialize();
  try {
    await withAdvisoryLock(options.url, 'migrations', () => runMigrationsUntimed(dataSource));
  } catch (err) {
    await dataSource.destroy();
    throw err;
  }
  return dataSource;
}

/**
 * Runs the pending migrations, each in its own transaction, on one session without the statement
 * timeout (a migration may rightly take minutes); the session gets its timeout back before it
 * returns to the pool.
 */
async function runMigrationsUntimed(dataSource: DataSource): Promise<void> {
  const runner = dataSource.createQueryRunner();
  try {
    await runner.query('SET statement_timeout = 0');
    const executor = new MigrationExecutor(dataSource, runner);
    executor.transaction = 'each';
    await executor.executePendingMigrations();
    await runner.query('RESET statement_timeout');
  } finally {
    await runner.release();
  }
}

/** The limits as node-postgres pool settings (sent as session parameters at connect). */
function sessionSettings(limits: DatabaseSessionLimits) {
  return {
    lock_timeout: limits.lockTimeoutMs,
    idle_in_transaction_session_timeout: limits.idleInTransactionMs,
    statement_timeout: limits.statementTimeoutMs,
    connectionTimeoutMillis: limits.acquireTimeoutMs,
  };
}

/**
 * Every session runs without PostgreSQL's JIT compiler: our statements take milliseconds, and JIT
 * compiles any whose estimated cost passes `jit_above_cost`, on every execution, for 50–200 ms.
 * Estimates pass it easily on small tables never analyzed (the OMS engine's read of what can
 * act, at 10,000 resting orders: 182 ms with JIT, 1 ms without).
 */
const WITHOUT_JIT = '-c jit=off';

/** `-c name=value` pairs; names are a service's own (dotted), values plain, so neither needs quoting. */
function startupOptions(settings: Record<string, string>): string {
  const own = Object.entries(settings).map(([name, value]) => {
    if (!/^[a-z_]+\.[a-z_]+$/.test(name) || !/^[A-Za-z0-9_.-]*$/.test(value))
      throw new Error(`database setting ${name}: unsupported name or value`);
    return `-c ${name}=${value}`;
  });
  return [WITHOUT_JIT, ...own].join(' ');
}

/**
 * Runs `fn` while this session holds the advisory lock `name`, one instance at a time. The lock is
 * tried, not waited for: a statement blocked in `pg_advisory_lock` keeps its snapshot, and a
 * migration building an index CONCURRENTLY in the holder waits for every older snapshot of the
 * database, so it waited on its own queue until lock_timeout failed it (two OMS instances
 * starting together on an empty database).
 */
async function withAdvisoryLock<T>(url: string, name: string, fn: () => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    for (;;) {
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [name]);
      if (rows[0]?.locked) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return await fn();
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [name]).catch(() => undefined);
    await client.end();
  }
}

/** `postgres://host/db` → the same server with another database name. */
export function withDatabaseName(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = '/' + database;
  return u.toString();
}

export function databaseNameOf(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
}

const SAFE_DB_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Creates the database named in `url` when it does not exist (all-in-one mode and tests). */
export async function ensureDatabase(url: string): Promise<void> {
  const name = databaseNameOf(url);
  if (!SAFE_DB_NAME.test(name)) throw new Error(`refusing to create database with unsafe name "${name}"`);
  const admin = new Client({ connectionString: withDatabaseName(url, 'postgres') });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) {
      await admin.query(`CREATE DATABASE "${name}"`).catch((err: { code?: string }) => {
        // created meanwhile by a sibling process (either error, depending on timing)
        if (err.code !== '42P04' && err.code !== '23505') throw err;
      });
    }
  } finally {
    await admin.end();
  }
}

export async function dropDatabase(url: string): Promise<void> {
  const name = databaseNameOf(url);
  if (!SAFE_DB_NAME.test(name)) throw new Error(`refusing to drop database with unsafe name "${name}"`);
  const admin = new Client({ connectionString: withDatabaseName(url, 'postgres') });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** Readiness probe: the pool can run a query. */
export async function pingDatabase(dataSource: DataSource): Promise<void> {
  await dataSource.query('SELECT 1');
}
export * from './idempotency';
export { databasePoolMetrics } from './pool-metrics';
export { queryPrepared, type PreparedStatement } from './prepared';
export { NotifiedCache } from './notified-cache';
export { Bulkhead } from './bulkhead';
