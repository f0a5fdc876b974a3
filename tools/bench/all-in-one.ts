/**
 * The all-in-one as a user starts it (`npm start` = tsx apps/platform/src/main.ts): its own
 * databases on the local server (PLATFORM_DB_PREFIX), free ports, request budgets no load reaches,
 * the per-vendor token-call budget and the open-order cap raised (the rotation and order loads), every other setting (LOG_LEVEL,
 * workers per core, demo seed) the product's default.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dropDatabase, withDatabaseName } from '@trading/db';
import { childrenOf, type Watched } from './proc';
import { freePort, rateLimitsEnv, startTsx, stopProcess, waitUntil, type Started } from './processes';
import { deleteStream } from './streams';
import type { Urls } from '@trading/testing';

const PORTS = ['FACADE', 'AUTH', 'GATEWAY', 'ACCOUNTS', 'BANKING', 'OMS'] as const;
const DATABASES = ['auth', 'accounts', 'banking', 'oms'];

export interface AllInOne {
  urls: Urls;
  adminToken: string;
  /** The primary and its workers (one per core by default). */
  processes(): Watched[];
  stop(): Promise<void>;
}

export async function startAllInOne(options: {
  root: string;
  postgresServer: string;
  redisUrl: string;
  prefix: string;
  logDir: string;
}): Promise<AllInOne> {
  const adminToken = `adm_bench_${randomBytes(16).toString('hex')}`;
  const ports: Record<string, string> = {};
  for (const name of PORTS) {
    ports[`${name}_PORT`] = String(await freePort());
    ports[`${name}_INTERNAL_PORT`] = String(await freePort());
  }
  ports['AUTH_ADMIN_PORT'] = String(await freePort());
  const env = {
    DATABASE_URL: options.postgresServer,
    REDIS_URL: options.redisUrl,
    PLATFORM_DB_PREFIX: options.prefix,
    PLATFORM_DATA_DIR: join(options.logDir, 'platform-data'),
    AUTH_ADMIN_TOKEN: adminToken,
    AUTH_KEY_ENCRYPTION_KEY: `kek_bench_${randomBytes(24).toString('hex')}`,
    ...rateLimitsEnv(`${options.prefix}api`),
    // Token calls per vendor app: the rotation load is one app's 32 chains.
    OAUTH_TOKEN_MAX_REQUESTS_PER_CLIENT: '1000000000',
    // The order load's book of resting orders grows by thousands per account.
    OMS_MAX_OPEN_ORDERS_PER_ACCOUNT: '1000000000',
    ...ports,
  };
  // BENCH_CPU_PROFILE=<dir>: the primary and its workers (which inherit its flags) each write a V8 CPU profile there when they stop.
  const profile = process.env['BENCH_CPU_PROFILE'] ? ['--cpu-prof', `--cpu-prof-dir=${process.env['BENCH_CPU_PROFILE']}`] : [];
  const primary = startTsx('all-in-one', 'apps/platform/src/main.ts', env, options.logDir, options.root, profile);
  const stop = async () => {
    await stopProcess(primary);
    for (const name of DATABASES) await dropDatabase(withDatabaseName(`${options.postgresServer}/postgres`, `${options.prefix}${name}`));
    await deleteStream(options.redisUrl, `${options.prefix}oms:events`);
  };
  try {
    // The banner's last line: every worker is up.
    await waitUntil(primary, 'start banner', async () => readFileSync(primary.log, 'utf8').includes('Ctrl-C stops everything'), 180_000);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    urls: {
      api: `http://127.0.0.1:${ports['FACADE_PORT']}/v1`,
      login: `http://localhost:${ports['AUTH_PORT']}`,
      admin: `http://127.0.0.1:${ports['AUTH_ADMIN_PORT']}`,
    },
    adminToken,
    processes: () => processTree(primary),
    stop,
  };
}

function processTree(primary: Started): Watched[] {
  const workers = childrenOf(primary.pid).map((pid, i) => ({ name: `worker ${i + 1}`, pid }));
  return [{ name: 'primary', pid: primary.pid }, ...workers];
}
