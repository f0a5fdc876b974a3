import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The all-in-one's stop fits in a supervisor's grace period (systemd, a process manager, a CI
 * runner: SIGTERM to the group, SIGKILL 10 s later): the apps get APPS_STOP_GRACE_MS to drain,
 * then PostgreSQL gets FAST_MS for a fast shutdown, IMMEDIATE_MS for an immediate one, and is
 * then killed. PostgreSQL runs in a process group of its own, so a SIGKILL of ours would leave it
 * running, holding its port and its cluster: it must be stopped before the platform exits.
 */
export const APPS_STOP_GRACE_MS = 5_000;
const FAST_MS = 2_000;
const IMMEDIATE_MS = 1_000;

/** The pid in a cluster's postmaster.pid (its first line), if the file is there. */
export function postmasterPid(clusterDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The postmaster still running this cluster, if any: the pid of its postmaster.pid, alive, and a
 * PostgreSQL started on this very directory (a dead server's pid may since belong to another program).
 */
export function runningPostmaster(clusterDir: string): number | undefined {
  const pid = postmasterPid(clusterDir);
  if (!pid || !running(pid)) return undefined;
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return /postgres/.test(argv[0] ?? '') && argv.includes(clusterDir) ? pid : undefined;
  } catch {
    return pid; // no /proc (macOS): alive is the best we can tell
  }
}

/**
 * Removes the cluster's postmaster.pid when no PostgreSQL runs the cluster any more: its server was
 * killed, and its pid is gone, taken by another program, or a zombie its new parent has not reaped
 * yet. PostgreSQL takes any pid that answers a signal for a live server and refuses to start, so a
 * start after a killed server could otherwise fail for as long as the zombie lingers. True when removed.
 */
export function removeStaleLockFile(clusterDir: string): boolean {
  if (postmasterPid(clusterDir) === undefined || runningPostmaster(clusterDir) !== undefined) return false;
  rmSync(join(clusterDir, 'postmaster.pid'), { force: true });
  return true;
}

/**
 * The same for the lock file of the server's Unix socket (`<socketDir>/.s.PGSQL.<port>.lock`),
 * which names the postmaster too and is checked the same way: removed when the pid in it runs
 * nothing (gone, or a zombie). Another live server's lock stays. True when removed.
 */
export function removeStaleSocketLock(port: number, socketDir = '/tmp'): boolean {
  const file = join(socketDir, `.s.PGSQL.${port}.lock`);
  let pid: number;
  try {
    pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  } catch {
    return false;
  }
  if (Number.isInteger(pid) && pid > 0 && running(pid)) return false;
  rmSync(file, { force: true });
  return true;
}

/** Whether `pid` runs (a zombie, dead but not yet reaped, does not). */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

/**
 * Stops a postmaster within FAST_MS + IMMEDIATE_MS and a moment: fast shutdown (SIGINT: sessions
 * ended, a checkpoint), then immediate (SIGQUIT: no checkpoint, recovery at the next start), then
 * SIGKILL of it and its server processes (a killed postmaster's backends would keep the shared
 * memory that the next start needs).
 */
export async function stopPostmaster(pid: number): Promise<'fast' | 'immediate' | 'killed'> {
  for (const [signal, waitMs, how] of [
    ['SIGINT', FAST_MS, 'fast'],
    ['SIGQUIT', IMMEDIATE_MS, 'immediate'],
  ] as const) {
    signalProcess(pid, signal);
    for (const deadline = Date.now() + waitMs; Date.now() < deadline; ) {
      if (!running(pid)) return how;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  killWithServerProcesses(pid);
  for (let i = 0; i < 40 && running(pid); i++) await new Promise((r) => setTimeout(r, 25));
  return 'killed';
}

/**
 * The same, synchronously and shorter (immediate shutdown, then SIGKILL), for a process that is
 * exiting and can no longer wait on its event loop.
 */
export function stopPostmasterNow(pid: number): void {
  if (!running(pid)) return;
  signalProcess(pid, 'SIGQUIT');
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; waited < IMMEDIATE_MS && running(pid); waited += 25) Atomics.wait(pause, 0, 0, 25);
  if (running(pid)) killWithServerProcesses(pid);
}

function killWithServerProcesses(pid: number): void {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // no /proc: the backends notice their postmaster is gone and exit on their own
  }
  for (const child of [pid, ...children]) signalProcess(child, 'SIGKILL');
}

function signalProcess(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone already
  }
}
