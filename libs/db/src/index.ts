import { Client } from 'pg';
import { DataSource, type EntitySchema, type MixedList } from 'typeorm';

export { DataSource };
export type { EntitySchema, MigrationInterface, QueryRunner } from 'typeorm';

export interface DatabaseOptions {
  url: string;
  entities: MixedList<EntitySchema | (new () => unknown)>;
  migrations: MixedList<new () => unknown>;
  /** Pool size per service instance. */
  poolSize?: number;
}

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
    extra: { max: options.poolSize ?? 10 },
  });
  await dataSource.initialize();
  try {
    await withAdvisoryLock(options.url, 'migrations', () => dataSource.runMigrations({ transaction: 'each' }));
  } catch (err) {
    await dataSource.destroy();
    throw err;
  }
  return dataSource;
}

async function withAdvisoryLock<T>(url: string, name: string, fn: () => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
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
export { NotifiedCache, type NotifiedCacheOptions } from './notified-cache';
