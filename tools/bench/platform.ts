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
import { childrenOf, type Watched } from './proc';
import { deleteKeys, freePort, Group, profileFlags, rateLimitsEnv, startNode, stopProcess, waitUntil } from './processes';

const DATABASES = ['auth', 'accounts', 'banking', 'oms'] as const;
const APPS = [...DATABASES, 'gateway', 'rest-facade'] as const;
export type App = (typeof APPS)[number];
/** Each app's prefix of its own settings (`<P>_PORT`, `<P>_INTERNAL_PORT`, `<P>_DATABASE_URL`). */
const prefixOf = (app: App) => (app === 'rest-facade' ? 'FACADE' : app.toUpperCase());
/** Large enough never to refuse the bench's load, which is not what these limits are for. */
const UNLIMITED = '1000000000';

export interface PlatformOptions {
  /** Where the code is run (and built) from. */
  root: string;
  postgresServer: string;
  redisUrl: string;
  /** Of the databases' names and the Redis stream's. */
  prefix: string;
  logDir: string;
}

export interface Platform {
  urls: Urls;
  adminToken: string;
  stop(): Promise<void>;
}

const at = (p: number | string) => `http://127.0.0.1:${p}`;
const dbUrl = (o: PlatformOptions, name: string) => withDatabaseName(`${o.postgresServer}/postgres`, `${o.prefix}${name}`);
const adminToken = () => `adm_bench_${randomBytes(16).toString('hex')}`;

/** `stop` what was started, then drop the databases and the settlement stream it made. */
const cleanUp = (o: PlatformOptions, stop: () => Promise<void>) => async () => {
  await stop();
  for (const name of DATABASES) await dropDatabase(dbUrl(o, name));
  await deleteKeys(o.redisUrl, `${o.prefix}oms:events`);
};

/** `npm start` (tsx apps/platform/src/main.ts): the primary and its workers (one per core by default). */
export async function startAllInOne(o: PlatformOptions): Promise<Platform & { processes(): Watched[] }> {
  const ports: Record<string, string> = {};
  for (const name of APPS.map(prefixOf)) {
    ports[`${name}_PORT`] = String(await freePort());
    ports[`${name}_INTERNAL_PORT`] = String(await freePort());
  }
  ports['AUTH_ADMIN_PORT'] = String(await freePort());
  const token = adminToken();
  const env = {
    DATABASE_URL: o.postgresServer,
    REDIS_URL: o.redisUrl,
    PLATFORM_DB_PREFIX: o.prefix,
    PLATFORM_DATA_DIR: join(o.logDir, 'platform-data'),
    AUTH_ADMIN_TOKEN: token,
    AUTH_KEY_ENCRYPTION_KEY: `kek_bench_${randomBytes(24).toString('hex')}`,
    ...rateLimitsEnv(`${o.prefix}api`),
    OAUTH_TOKEN_MAX_REQUESTS_PER_CLIENT: UNLIMITED,
    OMS_MAX_OPEN_ORDERS_PER_ACCOUNT: UNLIMITED,
    ...ports,
  };
  // Its workers inherit the primary's flags: with BENCH_CPU_PROFILE, each writes a profile of its own.
  const primary = startNode('all-in-one', 'apps/platform/src/main.ts', env, o.logDir, { cwd: o.root, flags: profileFlags() });
  const stop = cleanUp(o, () => stopProcess(primary));
  try {
    // The banner's last line: every worker is up.
    await waitUntil(primary, 'start banner', async () => readFileSync(primary.log, 'utf8').includes('Ctrl-C stops everything'), 180_000);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    urls: { api: `${at(ports['FACADE_PORT']!)}/v1`, login: `http://localhost:${ports['AUTH_PORT']}`, admin: at(ports['AUTH_ADMIN_PORT']!) },
    adminToken: token,
    processes: () => [
      { name: 'primary', pid: primary.pid },
      ...childrenOf(primary.pid).map((pid, i) => ({ name: `worker ${i + 1}`, pid })),
    ],
    stop,
  };
}

export interface ServiceMode extends Platform {
  /** The gateway's public listener (bearer tokens). */
  gatewayUrl: string;
  pidOf(app: App): Watched;
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

/** What the six apps are told about themselves and each other: keys (one identity per service), ports, the issuer, the stream. */
async function layOut(options: PlatformOptions) {
  type Key = ReturnType<typeof generateServiceKey>;
  const keys = Object.fromEntries(SERVICE_NAMES.map((s) => [s, generateServiceKey(s)])) as Record<ServiceName, Key>;
  const [port, internal] = [{} as Record<App, number>, {} as Record<App, number>];
  for (const app of APPS) [port[app], internal[app]] = [await freePort(), await freePort()];
  return {
    options,
    keys,
    trusted: JSON.stringify(TrustedServiceKeys.of(...Object.values(keys))),
    port,
    internal,
    adminPort: await freePort(),
    adminToken: adminToken(),
    issuer: `http://localhost:${port.auth}`,
    stream: `${options.prefix}oms:events`,
    limits: rateLimitsEnv(`${options.prefix}api`),
  };
}
type Layout = Awaited<ReturnType<typeof layOut>>;

/** smoke.sh's app_env: exactly the app's own environment. */
function envOf(l: Layout, app: App): Record<string, string> {
  const [internal, P] = [(a: App) => at(l.internal[a]), prefixOf(app)];
  const [accounts, stream] = [{ ACCOUNTS_URL: `${internal('accounts')}/graphql` }, { EVENTS_STREAM: l.stream }];
  const jwks = { AUTH_JWKS_URL: `${at(l.port.auth)}/.well-known/jwks.json`, AUTH_ISSUER: l.issuer };
  const own = {
    auth: () => ({
      AUTH_ADMIN_PORT: String(l.adminPort),
      AUTH_ISSUER: l.issuer,
      AUTH_API_URL: `${at(l.port['rest-facade'])}/v1`,
      AUTH_ADMIN_TOKEN: l.adminToken,
      ACCOUNTS_INTERNAL_URL: internal('accounts'),
      BANKING_INTERNAL_URL: internal('banking'),
      OMS_INTERNAL_URL: internal('oms'),
      MAIL_LOG_FILE: join(l.options.logDir, 'mail.log'),
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
      FACADE_PUBLIC_URL: `${at(l.port['rest-facade'])}/v1`, // the URL DPoP proofs name (htu)
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
    SERVICE_TRUSTED_KEYS: l.trusted,
    REDIS_URL: l.options.redisUrl,
    // BENCH_LOG_LEVEL=debug: every hop's access-log line, with its time; the product's default otherwise.
    ...(process.env['BENCH_LOG_LEVEL'] ? { LOG_LEVEL: process.env['BENCH_LOG_LEVEL'] } : {}),
    [`${P}_PORT`]: String(l.port[app]),
    [`${P}_INTERNAL_PORT`]: String(l.internal[app]),
    ...((DATABASES as readonly App[]).includes(app) ? { [`${P}_DATABASE_URL`]: dbUrl(l.options, app) } : {}),
    ...own,
  };
}

/**
 * The six bundles (dist/apps/<app>/main.js) as separate processes, started as the Dockerfile starts
 * them, one database per domain; the machine's Redis without ACL users, the stream under the run's name.
 */
export async function startServiceMode(o: PlatformOptions): Promise<ServiceMode> {
  for (const app of APPS)
    if (!existsSync(join(o.root, 'dist/apps', app, 'main.js')))
      throw new Error(`dist/apps/${app}/main.js missing: build first (npx nx run-many -t build)`);
  const l = await layOut(o);
  const group = new Group(o.logDir);
  const started = new Map<App, Watched>();
  const startApp = async (app: App) => {
    const opts = { cwd: o.root, flags: profileFlags() };
    started.set(app, await group.serve(app, `dist/apps/${app}/main.js`, envOf(l, app), `${at(l.port[app])}/readyz`, opts));
  };
  const stop = cleanUp(o, () => group.stop());
  try {
    for (const name of DATABASES) await ensureDatabase(dbUrl(o, name));
    // The domains and auth first (each migrates its own database), then the gateway, then the facade in front.
    await Promise.all(DATABASES.map(startApp));
    await startApp('gateway');
    await startApp('rest-facade');
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    urls: { api: `${at(l.port['rest-facade'])}/v1`, login: `http://localhost:${l.port.auth}`, admin: at(l.adminPort) },
    adminToken: l.adminToken,
    gatewayUrl: `${at(l.port.gateway)}/graphql`,
    pidOf: (app) => ({ name: app === 'rest-facade' ? 'facade' : app, pid: started.get(app)!.pid }),
    stop,
  };
}
