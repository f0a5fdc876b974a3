/**
 * Service mode as tools/service-mode/smoke.sh runs it: the six bundles (`nx run-many -t build`,
 * dist/apps/<app>/main.js) as separate processes started as the Dockerfile starts them
 * (`node dist/apps/<app>/main.js`), one identity per service (as `npm run service-keys` makes
 * them), one database per domain, each app given exactly its own environment. Differences, for
 * the bench: the machine's Redis without ACL users (the settlement stream under the run's own
 * name), LOG_LEVEL left at the product's default, request limits off, and the per-app limits
 * that would refuse a load (token calls per vendor app, open orders per account) raised.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { exportServiceKey, generateServiceKey, SERVICE_NAMES, TrustedServiceKeys, type ServiceName } from '@trading/auth';
import { dropDatabase, ensureDatabase, withDatabaseName } from '@trading/db';
import type { Watched } from './proc';
import { answers200, freePort, rateLimitsEnv, startProcess, stopProcess, waitUntil, type Started } from './processes';
import { deleteStream } from './streams';
import type { Urls } from '@trading/testing';

const run = promisify(execFile);

const APPS = ['auth', 'accounts', 'banking', 'oms', 'gateway', 'rest-facade'] as const;
type App = (typeof APPS)[number];
const DATABASES = ['auth', 'accounts', 'banking', 'oms'] as const;
/** Large enough never to refuse the bench's load, which is not what these limits are for. */
const UNLIMITED = '1000000000';

export interface ServiceMode {
  urls: Urls;
  adminToken: string;
  /** The gateway's public listener (bearer tokens). */
  gatewayUrl: string;
  pidOf(app: App): Watched;
  stop(): Promise<void>;
}

/** `npx nx run-many -t build` in `root`. */
export async function buildBundles(root: string): Promise<void> {
  const started = Date.now();
  try {
    await run('npx', ['nx', 'run-many', '-t', 'build', '--outputStyle=static'], {
      cwd: root,
      env: { ...process.env, NX_DAEMON: 'false' },
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`nx run-many -t build failed:\n${`${e.stdout ?? ''}${e.stderr ?? ''}`.slice(-3000)}`);
  }
  process.stderr.write(`built the bundles in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

interface ServiceModeOptions {
  root: string;
  postgresServer: string;
  redisUrl: string;
  prefix: string;
  logDir: string;
}

/** What the six apps are told about themselves and each other: keys, ports, the issuer, the stream. */
interface Layout {
  options: ServiceModeOptions;
  keys: Record<ServiceName, ReturnType<typeof generateServiceKey>>;
  trusted: string;
  port: Record<App, number>;
  internal: Record<App, number>;
  adminPort: number;
  adminToken: string;
  issuer: string;
  stream: string;
  limits: Record<string, string>;
}

const at = (p: number) => `http://127.0.0.1:${p}`;
const dbUrl = (options: ServiceModeOptions, name: string) =>
  withDatabaseName(`${options.postgresServer}/postgres`, `${options.prefix}${name}`);

async function layOut(options: ServiceModeOptions): Promise<Layout> {
  const keys = Object.fromEntries(SERVICE_NAMES.map((s) => [s, generateServiceKey(s)])) as Layout['keys'];
  const trusted = JSON.stringify(TrustedServiceKeys.of(...Object.values(keys)));
  const port: Record<App, number> = {} as Record<App, number>;
  const internal: Record<App, number> = {} as Record<App, number>;
  for (const app of APPS) {
    port[app] = await freePort();
    internal[app] = await freePort();
  }
  const adminPort = await freePort();
  const adminToken = `adm_bench_${randomBytes(16).toString('hex')}`;
  return {
    options,
    keys,
    trusted,
    port,
    internal,
    adminPort,
    adminToken,
    issuer: `http://localhost:${port.auth}`,
    stream: `${options.prefix}oms:events`,
    limits: rateLimitsEnv(`${options.prefix}api`),
  };
}

/** smoke.sh's app_env, app by app: what each app is given besides the settings they all share. */
const OWN_ENV: Record<App, (l: Layout) => Record<string, string>> = {
  auth: ({ options, port, internal, adminPort, adminToken, issuer }) => ({
    AUTH_PORT: String(port.auth),
    AUTH_INTERNAL_PORT: String(internal.auth),
    AUTH_ADMIN_PORT: String(adminPort),
    AUTH_DATABASE_URL: dbUrl(options, 'auth'),
    AUTH_ISSUER: issuer,
    AUTH_API_URL: `${at(port['rest-facade'])}/v1`,
    AUTH_ADMIN_TOKEN: adminToken,
    ACCOUNTS_INTERNAL_URL: at(internal.accounts),
    BANKING_INTERNAL_URL: at(internal.banking),
    OMS_INTERNAL_URL: at(internal.oms),
    MAIL_LOG_FILE: join(options.logDir, 'mail.log'),
    OAUTH_TOKEN_MAX_REQUESTS_PER_CLIENT: UNLIMITED,
  }),
  accounts: ({ options, port, internal, stream }) => ({
    EVENTS_STREAM: stream,
    ACCOUNTS_PORT: String(port.accounts),
    ACCOUNTS_INTERNAL_PORT: String(internal.accounts),
    ACCOUNTS_DATABASE_URL: dbUrl(options, 'accounts'),
  }),
  banking: ({ options, port, internal, stream }) => ({
    EVENTS_STREAM: stream,
    ACCOUNTS_URL: `${at(internal.accounts)}/graphql`,
    BANKING_PORT: String(port.banking),
    BANKING_INTERNAL_PORT: String(internal.banking),
    BANKING_DATABASE_URL: dbUrl(options, 'banking'),
  }),
  oms: ({ options, port, internal, stream }) => ({
    EVENTS_STREAM: stream,
    ACCOUNTS_URL: `${at(internal.accounts)}/graphql`,
    BANKING_URL: at(internal.banking),
    OMS_PORT: String(port.oms),
    OMS_INTERNAL_PORT: String(internal.oms),
    OMS_DATABASE_URL: dbUrl(options, 'oms'),
    OMS_MAX_OPEN_ORDERS_PER_ACCOUNT: UNLIMITED,
  }),
  gateway: ({ port, internal, issuer, limits }) => ({
    ...limits,
    GATEWAY_PORT: String(port.gateway),
    GATEWAY_INTERNAL_PORT: String(internal.gateway),
    ACCOUNTS_URL: `${at(internal.accounts)}/graphql`,
    BANKING_URL: `${at(internal.banking)}/graphql`,
    OMS_URL: `${at(internal.oms)}/graphql`,
    AUTH_JWKS_URL: `${at(port.auth)}/.well-known/jwks.json`,
    AUTH_ISSUER: issuer,
  }),
  'rest-facade': ({ port, internal, issuer, limits, stream }) => ({
    ...limits,
    FACADE_PORT: String(port['rest-facade']),
    FACADE_PUBLIC_URL: `${at(port['rest-facade'])}/v1`, // the URL DPoP proofs name (htu)
    FACADE_INTERNAL_PORT: String(internal['rest-facade']),
    GATEWAY_URL: `${at(internal.gateway)}/graphql`,
    AUTH_INTERNAL_URL: at(internal.auth),
    AUTH_JWKS_URL: `${at(port.auth)}/.well-known/jwks.json`,
    AUTH_ISSUER: issuer,
    EVENTS_STREAM: stream,
  }),
};

function envOf(l: Layout, app: App): Record<string, string> {
  return {
    NODE_ENV: 'production',
    LISTEN_HOST: '127.0.0.1',
    INTERNAL_LISTEN_HOST: '127.0.0.1',
    SERVICE_KEY: exportServiceKey(l.keys[app]),
    SERVICE_TRUSTED_KEYS: l.trusted,
    REDIS_URL: l.options.redisUrl,
    // A diagnosis (`BENCH_LOG_LEVEL=debug`: every hop's access-log line, with its time); the product's default otherwise.
    ...(process.env['BENCH_LOG_LEVEL'] ? { LOG_LEVEL: process.env['BENCH_LOG_LEVEL'] } : {}),
    ...OWN_ENV[app](l),
  };
}

export async function startServiceMode(options: ServiceModeOptions): Promise<ServiceMode> {
  for (const app of APPS)
    if (!existsSync(join(options.root, 'dist/apps', app, 'main.js')))
      throw new Error(`dist/apps/${app}/main.js missing: build first (npx nx run-many -t build)`);

  const l = await layOut(options);
  const { port } = l;
  const started = new Map<App, Started>();
  const stop = async () => {
    await Promise.all([...started.values()].map((p) => stopProcess(p)));
    for (const name of DATABASES) await dropDatabase(dbUrl(options, name));
    await deleteStream(options.redisUrl, `${options.prefix}oms:events`);
  };
  try {
    for (const name of DATABASES) await ensureDatabase(dbUrl(options, name));
    const startApp = async (app: App) => {
      // BENCH_CPU_PROFILE=<dir>: each app writes a V8 CPU profile there when it stops.
      const profile = process.env['BENCH_CPU_PROFILE'] ? ['--cpu-prof', `--cpu-prof-dir=${process.env['BENCH_CPU_PROFILE']}`] : [];
      const p = startProcess(app, process.execPath, [...profile, `dist/apps/${app}/main.js`], envOf(l, app), options.logDir, options.root);
      started.set(app, p);
      await waitUntil(p, 'ready', () => answers200(`${at(port[app])}/readyz`));
    };
    // The domains and auth first (each migrates its own database), then the gateway, then the facade in front.
    await Promise.all((['auth', 'accounts', 'banking', 'oms'] as const).map(startApp));
    await startApp('gateway');
    await startApp('rest-facade');
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    urls: { api: `${at(port['rest-facade'])}/v1`, login: `http://localhost:${port.auth}`, admin: at(l.adminPort) },
    adminToken: l.adminToken,
    gatewayUrl: `${at(port.gateway)}/graphql`,
    pidOf: (app) => ({ name: app === 'rest-facade' ? 'facade' : app, pid: started.get(app)!.pid }),
    stop,
  };
}
