/** The six apps, two instances each, as separate node processes of the built bundles (as tools/service-mode/smoke.sh runs them). */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { testKeys, type TestKeys } from '@trading/testing';
import { exited, statusOf, terminateWithin, waitFor } from './processes';

export const APPS = ['auth', 'accounts', 'banking', 'oms', 'gateway', 'rest-facade'] as const;
export type AppName = (typeof APPS)[number];
/** The apps with a database of their own. */
export const DATABASES = ['auth', 'accounts', 'banking', 'oms'] as const;
export const INSTANCES = 2;
/** The all-in-one's port variables (apps/platform/src/config.ts). */
export const ALL_IN_ONE_PORTS = [
  'FACADE_PORT',
  'FACADE_INTERNAL_PORT',
  'AUTH_PORT',
  'AUTH_INTERNAL_PORT',
  'AUTH_ADMIN_PORT',
  'GATEWAY_PORT',
  'GATEWAY_INTERNAL_PORT',
  'ACCOUNTS_PORT',
  'ACCOUNTS_INTERNAL_PORT',
  'BANKING_PORT',
  'BANKING_INTERNAL_PORT',
  'OMS_PORT',
  'OMS_INTERNAL_PORT',
] as const;

/**
 * Ports from BASE: the load balancer's frontends for app n at BASE+10n (public) and BASE+100+10n
 * (internal); instance i at BASE+10n+1+i and BASE+100+10n+1+i; auth's admin API at BASE+200+i;
 * Redis BASE+300, PostgreSQL BASE+301.
 */
export class Ports {
  constructor(readonly base: number) {}
  private index = (app: AppName) => APPS.indexOf(app) * 10;
  lbPublic = (app: AppName) => this.base + this.index(app);
  lbInternal = (app: AppName) => this.base + 100 + this.index(app);
  public = (app: AppName, i: number) => this.base + this.index(app) + 1 + i;
  internal = (app: AppName, i: number) => this.base + 100 + this.index(app) + 1 + i;
  admin = (i: number) => this.base + 200 + i;
  redis = () => this.base + 300;
  postgres = () => this.base + 301;
  /** The all-in-one's own Redis, and its thirteen listeners from BASE+400. */
  allInOneRedis = () => this.base + 302;
  allInOne = (n: number) => this.base + 400 + n;
  all(): number[] {
    const ports = [this.redis(), this.postgres(), this.admin(0), this.admin(1), this.allInOneRedis()];
    for (let n = 0; n < ALL_IN_ONE_PORTS.length; n++) ports.push(this.allInOne(n));
    for (const app of APPS) {
      ports.push(this.lbPublic(app), this.lbInternal(app));
      for (let i = 0; i < INSTANCES; i++) ports.push(this.public(app, i), this.internal(app, i));
    }
    return ports;
  }
}

export const dbName = (app: string) => `scale_${app}`;

/** Where the apps' databases are: one server, or one read-write address in front of a primary that may change. */
export interface DatabaseServer {
  /** postgres://…/<database> */
  url(database: string): string;
}

/** Where the apps' Redis is: the variables an app connects with (its ACL user's URL; Sentinels or Cluster nodes beside it). */
export interface RedisService {
  readonly stream: string;
  env(app: AppName): Record<string, string>;
}

/** Every app's bundle under dist/apps, as the deployments run them (nx caches a build already made). */
export function buildBundles(root: string): void {
  const build = spawnSync('npx', ['nx', 'run-many', '-t', 'build', '--outputStyle=static'], {
    cwd: root,
    env: { ...process.env, NX_DAEMON: 'false' },
    encoding: 'utf8',
  });
  if (build.status !== 0) throw new Error(`nx build failed:\n${(build.stdout + build.stderr).slice(-2000)}`);
}

export interface Instance {
  app: AppName;
  index: number;
  /** `auth-1`, `oms-2`, …: HAProxy's server name too. */
  name: string;
  publicUrl: string;
  internalUrl: string;
  child?: ChildProcess;
  /** Every exit seen that this run did not ask for. */
  crashes: number;
}

export class Services {
  readonly keys: TestKeys = testKeys();
  readonly adminToken = `scale-admin-${randomBytes(16).toString('hex')}`;
  private readonly keyEncryptionKey = randomBytes(24).toString('hex');
  readonly instances: Instance[] = [];
  private readonly stopping = new Set<Instance>();

  constructor(
    private readonly root: string,
    private readonly dir: string,
    readonly ports: Ports,
    private readonly pg: DatabaseServer,
    private readonly redis: RedisService,
    /** The API budgets each edge enforces: off by default (a load test would trip them). */
    private readonly budgets: Record<string, string> = {
      API_RATE_LIMIT_PER_MINUTE: '0',
      API_ORDER_RATE_LIMIT_PER_MINUTE: '0',
      API_ADDRESS_RATE_LIMIT_PER_MINUTE: '0',
    },
  ) {
    for (const app of APPS)
      for (let i = 0; i < INSTANCES; i++)
        this.instances.push({
          app,
          index: i,
          name: `${app}-${i + 1}`,
          publicUrl: `http://127.0.0.1:${ports.public(app, i)}`,
          internalUrl: `http://127.0.0.1:${ports.internal(app, i)}`,
          crashes: 0,
        });
  }

  /** The load balancer's address for an app's public or internal listener. */
  lb(app: AppName, listener: 'public' | 'internal' = 'public'): string {
    return `http://127.0.0.1:${listener === 'public' ? this.ports.lbPublic(app) : this.ports.lbInternal(app)}`;
  }

  get issuer(): string {
    return `http://localhost:${this.ports.lbPublic('auth')}`;
  }

  of(app: AppName): Instance[] {
    return this.instances.filter((x) => x.app === app);
  }

  /** Every app's environment and nothing of the caller's: each one reaches its peers through the load balancer. */
  env(x: Instance): NodeJS.ProcessEnv {
    return {
      PATH: process.env['PATH'],
      HOME: process.env['HOME'] ?? '/tmp',
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      LISTEN_HOST: '127.0.0.1',
      INTERNAL_LISTEN_HOST: '127.0.0.1',
      ...this.keys.env(x.app),
      ...this.redis.env(x.app),
      ...this.ownEnv(x),
    };
  }

  /** What the instance is given besides what every app is: its ports, its database, its peers. */
  private ownEnv({ app, index: i }: Instance): Record<string, string> {
    const p = this.ports;
    const lbi = (a: AppName) => this.lb(a, 'internal');
    const stream = this.redis.stream;
    const jwks = { AUTH_JWKS_URL: `${this.lb('auth')}/.well-known/jwks.json`, AUTH_ISSUER: this.issuer };
    switch (app) {
      case 'auth':
        return {
          // Order changes and transfers' ends, which auth turns into webhooks (its ACL user reads this stream only).
          EVENTS_STREAM: stream,
          AUTH_PORT: String(p.public(app, i)),
          AUTH_INTERNAL_PORT: String(p.internal(app, i)),
          AUTH_ADMIN_PORT: String(p.admin(i)),
          AUTH_DATABASE_URL: this.pg.url(dbName('auth')),
          AUTH_ISSUER: this.issuer,
          AUTH_API_URL: `${this.lb('rest-facade')}/v1`,
          // HAProxy sends {base_url}/oauth/* here straight; its X-Forwarded-For is believed, as the facade's.
          AUTH_TRUST_PROXY: 'loopback',
          AUTH_ADMIN_TOKEN: this.adminToken,
          // The same everywhere: every instance reads the signing keys the other wrote.
          AUTH_KEY_ENCRYPTION_KEY: this.keyEncryptionKey,
          AUTH_ADMIN_MAX_REQUESTS_PER_MINUTE: '100000',
          MAIL_LOG_FILE: join(this.dir, 'mail.log'),
          ACCOUNTS_INTERNAL_URL: lbi('accounts'),
          BANKING_INTERNAL_URL: lbi('banking'),
          OMS_INTERNAL_URL: lbi('oms'),
        };
      case 'accounts':
        return {
          EVENTS_STREAM: stream,
          ACCOUNTS_PORT: String(p.public(app, i)),
          ACCOUNTS_INTERNAL_PORT: String(p.internal(app, i)),
          ACCOUNTS_DATABASE_URL: this.pg.url(dbName('accounts')),
        };
      case 'banking':
        return {
          EVENTS_STREAM: stream,
          ACCOUNTS_URL: `${lbi('accounts')}/graphql`,
          BANKING_PORT: String(p.public(app, i)),
          BANKING_INTERNAL_PORT: String(p.internal(app, i)),
          BANKING_DATABASE_URL: this.pg.url(dbName('banking')),
          BANKING_CLEARING_DELAY_MS: '200',
        };
      case 'oms':
        return {
          EVENTS_STREAM: stream,
          ACCOUNTS_URL: `${lbi('accounts')}/graphql`,
          BANKING_URL: lbi('banking'),
          OMS_PORT: String(p.public(app, i)),
          OMS_INTERNAL_PORT: String(p.internal(app, i)),
          OMS_DATABASE_URL: this.pg.url(dbName('oms')),
        };
      case 'gateway':
        return {
          ...this.budgets,
          ...jwks,
          GATEWAY_PORT: String(p.public(app, i)),
          GATEWAY_INTERNAL_PORT: String(p.internal(app, i)),
          ACCOUNTS_URL: `${lbi('accounts')}/graphql`,
          BANKING_URL: `${lbi('banking')}/graphql`,
          OMS_URL: `${lbi('oms')}/graphql`,
        };
      case 'rest-facade':
        return {
          ...this.budgets,
          ...jwks,
          EVENTS_STREAM: stream,
          FACADE_PORT: String(p.public(app, i)),
          FACADE_INTERNAL_PORT: String(p.internal(app, i)),
          GATEWAY_URL: `${lbi('gateway')}/graphql`,
          AUTH_INTERNAL_URL: lbi('auth'),
          // HAProxy on this machine is the facade's load balancer: its X-Forwarded-For is believed.
          FACADE_TRUST_PROXY: 'loopback',
        };
    }
  }

  start(x: Instance): void {
    const log = openSync(join(this.dir, `${x.name}.log`), 'a');
    const child = spawn(process.execPath, ['--enable-source-maps', join(this.root, 'dist/apps', x.app, 'main.js')], {
      env: this.env(x),
      stdio: ['ignore', log, log],
    });
    x.child = child;
    child.once('exit', () => {
      if (!this.stopping.has(x)) x.crashes++;
    });
  }

  logFile(x: Instance): string {
    return join(this.dir, `${x.name}.log`);
  }

  /** The last lines of an instance's log: a CI machine keeps only what was printed. */
  logTail(x: Instance, lines = 15): string {
    try {
      return readFileSync(this.logFile(x), 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  running(x: Instance): boolean {
    return !!x.child && x.child.exitCode === null && x.child.signalCode === null;
  }

  /** /readyz 200 on both listeners. */
  async waitReady(x: Instance, timeoutMs = 60_000): Promise<void> {
    await waitFor(`${x.name} /readyz`, timeoutMs, async () => {
      if (!this.running(x)) throw new Error(`${x.name} exited (see ${this.logFile(x)})`);
      return (await statusOf(`${x.publicUrl}/readyz`)) === 200 && (await statusOf(`${x.internalUrl}/readyz`)) === 200;
    }).catch((err: Error) => {
      if (!this.running(x)) throw new Error(`${x.name} exited during start; the end of ${this.logFile(x)}:\n${this.logTail(x)}`);
      throw err;
    });
  }

  /** SIGTERM, then the exit code and how long it took; undefined code = still running after `graceMs` (then SIGKILL). */
  async terminate(x: Instance, graceMs: number): Promise<{ code: number | string | undefined; ms: number }> {
    const child = x.child;
    if (!child || !this.running(x)) return { code: child?.exitCode ?? undefined, ms: 0 };
    this.stopping.add(x);
    const stopped = await terminateWithin(child, graceMs);
    this.stopping.delete(x);
    return stopped;
  }

  /** Last resort on the way out: whatever still runs is killed. */
  async killAll(): Promise<void> {
    await Promise.all(
      this.instances.map(async (x) => {
        if (!x.child || !this.running(x)) return;
        this.stopping.add(x);
        x.child.kill('SIGKILL');
        await exited(x.child, 5000);
      }),
    );
  }
}
