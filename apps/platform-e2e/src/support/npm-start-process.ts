import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropDatabase, withDatabaseName } from '@trading/db';
import { freePort, http, TEST_POSTGRES_URL, TEST_REDIS_URL, uniqueId } from '@trading/testing';
import { clusterPath, DEMO_USERS, LISTENER_PORTS } from '@trading/platform';
import { inDays } from './test-platform';

const ROOT = join(__dirname, '../../../..');

/** Pids of `pid`'s children, from /proc (the cluster's workers). */
export const childrenOf = (pid: number): number[] => {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
};

export const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** `npm start` as a user runs it (main.ts, a primary and its workers) against the test PostgreSQL and Redis, on free ports. */
export interface NpmStart {
  child: ChildProcess;
  /** Everything it printed so far, standard output and error. */
  output(): string;
  /** The port variables it was given (FACADE_PORT, AUTH_ADMIN_PORT, …). */
  env: Record<string, string>;
  adminToken: string;
  /** Its own PLATFORM_DATA_DIR (demo credentials and the like), removed by cleanUp. */
  dataDir: string;
  /** Its PLATFORM_DB_PREFIX (databases, settlement stream) and AUTH_KEY_ENCRYPTION_KEY: what a start `over` it reuses. */
  prefix: string;
  keyEncryptionKey: string;
  /** Kills what is left, drops its databases and removes its data directory. */
  cleanUp(): Promise<void>;
  /** The facade's public /readyz, asked every 100 ms while it started: status (0: not listening) and when it answered. */
  readinessWhileStarting: Array<{ status: number; at: number }>;
  /** When the banner appeared. */
  bannerAt: number;
  /** The facade's /v1 base URL. */
  api: string;
  /** A PAT session of the demo user Alice, made through the admin API and POST /v1/pat/login. */
  session(scope: 'READ_ONLY' | 'READ_WRITE'): Promise<string>;
}

/**
 * `embedded`: no DATABASE_URL, so it starts its own PostgreSQL in its data directory (as a
 * newcomer's first `npm start` does); it then runs in a process group of its own, as a terminal
 * runs it, so a test can send Ctrl-C's SIGINT to the whole group. `over`: the next start of an
 * installation stopped before (its data directory, databases, stream and credentials, new ports).
 */
export async function startNpmStart(
  extraEnv: Record<string, string> = {},
  options: { embedded?: boolean; over?: NpmStart } = {},
): Promise<NpmStart> {
  const installation = await installationFor(options.over);
  const { env, adminToken, dataDir, prefix } = installation;
  const child = await spawnMain(installation, extraEnv, options.embedded);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += String(chunk)));
  child.stderr!.on('data', (chunk) => (output += String(chunk)));
  const started: NpmStart = {
    child,
    output: () => output,
    ...installation,
    readinessWhileStarting: [],
    bannerAt: 0,
    api: `http://localhost:${env['FACADE_PORT']}/v1`,
    session: async (scope) => {
      const created = await http('POST', `http://127.0.0.1:${env['AUTH_ADMIN_PORT']}/admin/pats`, {
        token: adminToken,
        body: { email: DEMO_USERS[0]!.email, name: `npm start spec ${scope}`, scope, expires: inDays(2) },
      });
      if (created.status !== 201) throw new Error(`PAT creation answered ${created.status}`);
      const login = await http('POST', `${started.api}/pat/login`, { body: { token: created.body.token } });
      if (login.status !== 200) throw new Error(`PAT login answered ${login.status}`);
      return login.body.token as string;
    },
    cleanUp: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      if (options.embedded) rmSync(clusterPath(dataDir), { recursive: true, force: true });
      else
        for (const service of ['auth', 'accounts', 'banking', 'oms'])
          await dropDatabase(withDatabaseName(TEST_POSTGRES_URL, prefix + service));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  await watchStart(started);
  started.bannerAt = Date.now();
  if (!output.includes('Ctrl-C stops everything')) {
    // A start over another's installation leaves it to that one's cleanUp.
    if (options.over) child.kill('SIGKILL');
    else await started.cleanUp();
    throw new Error(`npm start did not come up:\n${output.slice(-3000)}`);
  }
  return started;
}

type Installation = Pick<NpmStart, 'env' | 'adminToken' | 'dataDir' | 'prefix' | 'keyEncryptionKey'>;

/** New ports, and the installation's prefix, credentials and data directory: those of `over`, else new ones. */
async function installationFor(over: NpmStart | undefined): Promise<Installation> {
  const prefix = over?.prefix ?? `t_${uniqueId()}_`;
  const env: Record<string, string> = {};
  for (const name of LISTENER_PORTS) env[name] = String(await freePort());
  const adminToken = over?.adminToken ?? `adm_test_${uniqueId()}_${uniqueId()}`;
  const keyEncryptionKey = over?.keyEncryptionKey ?? `kek_test_${uniqueId()}_${uniqueId()}_${uniqueId()}`;
  const dataDir = over?.dataDir ?? mkdtempSync(join(tmpdir(), 'npm-start-'));
  return { env, adminToken, dataDir, prefix, keyEncryptionKey };
}

/** main.ts in a child process, with nothing of this process's environment but PATH and HOME. */
async function spawnMain(
  { env, adminToken, dataDir, prefix, keyEncryptionKey }: Installation,
  extraEnv: Record<string, string>,
  embedded: boolean | undefined,
): Promise<ChildProcess> {
  return spawn(process.execPath, ['--import', 'tsx', 'apps/platform/src/main.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? '/tmp',
      ...(embedded ? { EMBEDDED_POSTGRES_PORT: String(await freePort()) } : { DATABASE_URL: TEST_POSTGRES_URL.replace(/\/[^/]*$/, '') }),
      REDIS_URL: TEST_REDIS_URL,
      PLATFORM_DB_PREFIX: prefix,
      PLATFORM_WORKERS: '2',
      PLATFORM_DATA_DIR: dataDir,
      AUTH_ADMIN_TOKEN: adminToken,
      AUTH_KEY_ENCRYPTION_KEY: keyEncryptionKey,
      API_RATE_LIMIT_PER_MINUTE: '0',
      API_ORDER_RATE_LIMIT_PER_MINUTE: '0',
      API_ADDRESS_RATE_LIMIT_PER_MINUTE: '0',
      ...env,
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: embedded,
  });
}

/** Asks the facade's /readyz every 100 ms until the banner appears (or the process exits, or 900 tries pass). */
async function watchStart(started: NpmStart): Promise<void> {
  for (let i = 0; i < 900 && !started.output().includes('Ctrl-C stops everything'); i++) {
    if (started.child.exitCode !== null) break;
    const status = await fetch(`http://127.0.0.1:${started.env['FACADE_PORT']}/readyz`, {
      headers: { connection: 'close' },
      signal: AbortSignal.timeout(2000),
    }).then(
      (res) => res.status,
      () => 0,
    );
    started.readinessWhileStarting.push({ status, at: Date.now() });
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A TCP forwarder in front of the test PostgreSQL that a test can switch off (every connection
 * cut, new ones refused: the database is away, as after a crash) and on again, on the same port.
 */
export class DatabaseSwitch {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private constructor(readonly port: number) {}

  static async start(): Promise<DatabaseSwitch> {
    const gate = new DatabaseSwitch(await freePort());
    await gate.on();
    return gate;
  }

  /** The server URL (no database) the platform is given as DATABASE_URL. */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}`;
  }

  async on(): Promise<void> {
    const target = new URL(TEST_POSTGRES_URL);
    const server = createServer((client) => {
      const upstream = connect(Number(target.port || 5432), target.hostname);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((done) => server.listen(this.port, '127.0.0.1', done));
    this.server = server;
  }

  async off(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  }
}
