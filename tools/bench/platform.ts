/**
 * Our platform as a user or a deployment starts it: the all-in-one (`npm start`) or service mode
 * (the six bundles as tools/service-mode/smoke.sh runs them). Each on databases of its own on the
 * local server (dropped afterwards), free ports, the edges' request budgets at a size no load
 * reaches, and the per-app limits that would refuse a load (token calls per vendor app, open
 * orders per account) raised; every other setting (LOG_LEVEL, workers per core) the product's default.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { exportServiceKey, generateServiceKey, SERVICE_NAMES, TrustedServiceKeys, type ServiceName } from '@trading/auth';
import { dropDatabase, ensureDatabase, withDatabaseName } from '@trading/db';
import type { Urls } from '@trading/testing';
import { RATE_LIMITS } from './measure';
import { childrenOf, type Watched } from './proc';
import { deleteKeys, freePort, Group, profileFlags, startNode, stopProcess, waitUntil } from './processes';

const DATABASES = ['auth', 'accounts', 'banking', 'oms'] as const;
const APPS = [...DATABASES, 'gateway', 'rest-facade'] as const;
type App = (typeof APPS)[number];
/** Each app's prefix of its own settings (`<P>_PORT`, `<P>_INTERNAL_PORT`, `<P>_DATABASE_URL`). */
const prefixOf = (app: App) => (app === 'rest-facade' ? 'FACADE' : app.toUpperCase());
/** Large enough never to refuse the bench's load, which is not what these limits are for. */
const UNLIMITED = '1000000000';
/** The edges' request budgets at a size no load reaches (their cost is measured, never a refusal), or 0 with BENCH_RATE_LIMITS=off. */
const budgets = Object.fromEntries(
  ['API_RATE_LIMIT', 'API_ORDER_RATE_LIMIT', 'API_ADDRESS_RATE_LIMIT', 'API_APP_RATE_LIMIT'].map((n) => [
    `${n}_PER_MINUTE`,
    RATE_LIMITS ? UNLIMITED : '0',
  ]),
);

export interface PlatformOptions {
  /** Where the code is run (and built) from. */
  root: string;
  postgresServer: string;
  redisUrl: string;
  /** Of the databases' names and the Redis stream's. */
  prefix: string;
  logDir: string;
}

type Platform = { urls: Urls; adminToken: string; stop(): Promise<void> };

const at = (p: number | string) => `http://127.0.0.1:${p}`;
type ServiceKey = ReturnType<typeof generateServiceKey>;
export const dbUrl = (o: PlatformOptions, name: string) => withDatabaseName(`${o.postgresServer}/postgres`, `${o.prefix}${name}`);

/** Every app's ports and key (one identity per service), auth's admin port and token, the URLs a user calls, the edges' budgets. */
async function layOut(o: PlatformOptions) {
  const [port, internal] = [{} as Record<App, number>, {} as Record<App, number>];
  for (const app of APPS) [port[app], internal[app]] = [await freePort(), await freePort()];
  const [adminPort, adminToken] = [await freePort(), `adm_bench_${randomBytes(16).toString('hex')}`];
  const urls = { api: `${at(port['rest-facade'])}/v1`, login: `http://localhost:${port.auth}`, admin: at(adminPort) };
  const keys = Object.fromEntries(SERVICE_NAMES.map((s) => [s, generateServiceKey(s)])) as Record<ServiceName, ServiceKey>;
  return { o, port, internal, adminPort, adminToken, urls, keys, limits: { ...budgets, API_RATE_LIMIT_NAMESPACE: `${o.prefix}api` } };
}
type Layout = Awaited<ReturnType<typeof layOut>>;

/** Runs `start`; answers `stop`: `stopProcesses`, then the run's databases and settlement stream dropped (at once when `start` fails). */
async function started(o: PlatformOptions, stopProcesses: () => Promise<void>, start: () => Promise<void>) {
  const stop = async () => {
    await stopProcesses();
    for (const name of DATABASES) await dropDatabase(dbUrl(o, name));
    await deleteKeys(o.redisUrl, `${o.prefix}oms:events`);
  };
  try {
    await start();
  } catch (err) {
    await stop();
    throw err;
  }
  return stop;
}

/** `npm start` (tsx apps/platform/src/main.ts): the primary and its workers (one per core by default). */
export async function startAllInOne(o: PlatformOptions): Promise<Platform & { processes(): Watched[] }> {
  const l = await layOut(o);
  const ports = APPS.flatMap((app) => [
    [`${prefixOf(app)}_PORT`, String(l.port[app])],
    [`${prefixOf(app)}_INTERNAL_PORT`, String(l.internal[app])],
  ]);
  const env = {
    DATABASE_URL: o.postgresServer,
    REDIS_URL: o.redisUrl,
    PLATFORM_DB_PREFIX: o.prefix,
    PLATFORM_DATA_DIR: join(o.logDir, 'platform-data'),
    AUTH_ADMIN_PORT: String(l.adminPort),
    AUTH_ADMIN_TOKEN: l.adminToken,
    AUTH_KEY_ENCRYPTION_KEY: `kek_bench_${randomBytes(24).toString('hex')}`,
    ...l.limits,
    OAUTH_TOKEN_MAX_REQUESTS_PER_CLIENT: UNLIMITED,
    OMS_MAX_OPEN_ORDERS_PER_ACCOUNT: UNLIMITED,
    ...Object.fromEntries(ports),
  };
  // Its workers inherit the primary's flags: with BENCH_CPU_PROFILE, each writes a profile of its own.
  const primary = startNode('all-in-one', 'apps/platform/src/main.ts', env, o.logDir, { cwd: o.root, flags: profileFlags() });
  // The banner's last line: every worker is up.
  const banner = async () => readFileSync(primary.log, 'utf8').includes('Ctrl-C stops everything');
  const stop = await started(
    o,
    () => stopProcess(primary),
    () => waitUntil(primary, 'start banner', banner, 180_000),
  );
  const workers = () => childrenOf(primary.pid).map((pid, i) => ({ name: `worker ${i + 1}`, pid }));
  return { urls: l.urls, adminToken: l.adminToken, processes: () => [{ name: 'primary', pid: primary.pid }, ...workers()], stop };
}

/** `npx nx run-many -t build` in `root`. */
export async function buildBundles(root: string): Promise<void> {
  const started = Date.now();
  try {
    const options = { cwd: root, env: { ...process.env, NX_DAEMON: 'false' }, maxBuffer: 64 * 1024 * 1024 };
    await promisify(execFile)('npx', ['nx', 'run-many', '-t', 'build', '--outputStyle=static'], options);
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`nx run-many -t build failed:\n${`${e.stdout ?? ''}${e.stderr ?? ''}`.slice(-3000)}`);
  }
  process.stderr.write(`built the bundles in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

/** smoke.sh's app_env: exactly the app's own environment. */
function envOf(l: Layout, app: App): Record<string, string> {
  const [internal, P, issuer] = [(a: App) => at(l.internal[a]), prefixOf(app), `http://localhost:${l.port.auth}`];
  const [accounts, stream] = [{ ACCOUNTS_URL: `${internal('accounts')}/graphql` }, { EVENTS_STREAM: `${l.o.prefix}oms:events` }];
  const jwks = { AUTH_JWKS_URL: `${at(l.port.auth)}/.well-known/jwks.json`, AUTH_ISSUER: issuer };
  const own = {
    auth: () => ({
      AUTH_ADMIN_PORT: String(l.adminPort),
      AUTH_ISSUER: issuer,
      AUTH_API_URL: l.urls.api,
      AUTH_ADMIN_TOKEN: l.adminToken,
      ACCOUNTS_INTERNAL_URL: internal('accounts'),
      BANKING_INTERNAL_URL: internal('banking'),
      OMS_INTERNAL_URL: internal('oms'),
      MAIL_LOG_FILE: join(l.o.logDir, 'mail.log'),
      OAUTH_TOKEN_MAX_REQUESTS_PER_CLIENT: UNLIMITED,
    }),
    accounts: () => stream,
    banking: () => ({ ...stream, ...accounts }),
    oms: () => ({ ...stream, ...accounts, BANKING_URL: internal('banking'), OMS_MAX_OPEN_ORDERS_PER_ACCOUNT: UNLIMITED }),
    gateway: () => ({
      ...l.limits,
      ...accounts,
      BANKING_URL: `${internal('banking')}/graphql`,
      OMS_URL: `${internal('oms')}/graphql`,
      ...jwks,
    }),
    'rest-facade': () => ({
      ...l.limits,
      FACADE_PUBLIC_URL: l.urls.api, // the URL DPoP proofs name (htu)
      GATEWAY_URL: `${internal('gateway')}/graphql`,
      AUTH_INTERNAL_URL: internal('auth'),
      ...jwks,
      ...stream,
    }),
  }[app]();
  return {
    NODE_ENV: 'production',
    LISTEN_HOST: '127.0.0.1',
    INTERNAL_LISTEN_HOST: '127.0.0.1',
    SERVICE_KEY: exportServiceKey(l.keys[app]),
    SERVICE_TRUSTED_KEYS: JSON.stringify(TrustedServiceKeys.of(...Object.values(l.keys))),
    REDIS_URL: l.o.redisUrl,
    // BENCH_LOG_LEVEL=debug: every hop's access-log line, with its time; the product's default otherwise.
    ...(process.env['BENCH_LOG_LEVEL'] ? { LOG_LEVEL: process.env['BENCH_LOG_LEVEL'] } : {}),
    [`${P}_PORT`]: String(l.port[app]),
    [`${P}_INTERNAL_PORT`]: String(l.internal[app]),
    ...((DATABASES as readonly App[]).includes(app) ? { [`${P}_DATABASE_URL`]: dbUrl(l.o, app) } : {}),
    ...own,
  };
}

/**
 * The six bundles (dist/apps/<app>/main.js) as separate processes, started as the Dockerfile starts
 * them, one database per domain; the machine's Redis without ACL users, the stream under the run's name.
 */
export async function startServiceMode(o: PlatformOptions): Promise<Platform & { gatewayUrl: string; pids(...apps: App[]): Watched[] }> {
  for (const app of APPS)
    if (!existsSync(join(o.root, 'dist/apps', app, 'main.js')))
      throw new Error(`dist/apps/${app}/main.js missing: build first (npx nx run-many -t build)`);
  const l = await layOut(o);
  const [group, pids] = [new Group(o.logDir), new Map<App, number>()];
  const startApp = async (app: App) => {
    const opts = { cwd: o.root, flags: profileFlags() };
    pids.set(app, (await group.serve(app, `dist/apps/${app}/main.js`, envOf(l, app), `${at(l.port[app])}/readyz`, opts)).pid);
  };
  const stop = await started(
    o,
    () => group.stop(),
    async () => {
      for (const name of DATABASES) await ensureDatabase(dbUrl(o, name));
      // The domains and auth first (each migrates its own database), then the gateway, then the facade in front.
      await Promise.all(DATABASES.map(startApp));
      await startApp('gateway');
      await startApp('rest-facade');
    },
  );
  const watched = (...apps: App[]) => apps.map((app) => ({ name: app === 'rest-facade' ? 'facade' : app, pid: pids.get(app)! }));
  return { urls: l.urls, adminToken: l.adminToken, gatewayUrl: `${at(l.port.gateway)}/graphql`, pids: watched, stop };
}
