/** Child processes the bench starts (each target as a user would run it): their logs, readiness and stopping; the Redis keys they leave. */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from 'redis';
export { freePort } from '@trading/testing';

export const ROOT = join(__dirname, '../..');

type Started = { name: string; child: ChildProcess; pid: number; log: string };
type Env = Record<string, string>;

/** Starts `node <flags> <file>` (a .ts file through tsx, as `npm start` does) with exactly `env`, its output to `<logDir>/<name>.log`. */
export function startNode(name: string, file: string, env: Env, logDir: string, { cwd = ROOT, flags = [] as string[] } = {}): Started {
  const log = join(logDir, `${name}.log`);
  const fd = openSync(log, 'a');
  const args = [...flags, ...(file.endsWith('.ts') ? ['--import', 'tsx'] : []), file];
  const child = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', ...env },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  if (!child.pid) throw new Error(`${name}: could not start ${file}`);
  return { name, child, pid: child.pid, log };
}

/** BENCH_CPU_PROFILE=<dir>: a process (and the workers it forks) writes a V8 CPU profile there when it stops. */
export const profileFlags = (dir = process.env['BENCH_CPU_PROFILE']) => (dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []);

/** The last lines of a process's log (opened before it started). */
const logTail = (p: Started) => readFileSync(p.log, 'utf8').trimEnd().split('\n').slice(-25).join('\n');

/** Polls `check` until it answers true; fails naming `what` (with the log's tail) if `p` exits or time runs out. */
export async function waitUntil(p: Started, what: string, check: () => Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (p.child.exitCode !== null || p.child.signalCode !== null)
      throw new Error(`${p.name} exited (${p.child.exitCode ?? p.child.signalCode}) before ${what}:\n${logTail(p)}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${p.name}: no ${what} after ${timeoutMs / 1000} s:\n${logTail(p)}`);
    await sleep(250);
  }
}

const answers200 = async (url: string, init?: RequestInit) => {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(3000) });
  await res.arrayBuffer();
  return res.status === 200;
};

/** SIGTERM, then SIGKILL after 20 s. */
export async function stopProcess(p: Started): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => p.child.once('exit', () => resolve()));
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}

/** Processes started together, each once it answers, and stopped together. */
export class Group {
  private readonly started: Started[] = [];
  constructor(private readonly logDir: string) {}

  /** `use` a group, stopped afterwards whatever happened. */
  static async run(logDir: string, use: (group: Group) => Promise<void>): Promise<void> {
    const group = new Group(logDir);
    try {
      await use(group);
    } finally {
      await group.stop();
    }
  }

  /** Starts `file` as startNode does (`opts.cwd`, `opts.flags`), then waits until `url` answers 200 to `opts.init`. */
  async serve(name: string, file: string, env: Env, url: string, opts: { init?: RequestInit; cwd?: string; flags?: string[] } = {}) {
    const p = startNode(name, file, env, this.logDir, opts);
    this.started.push(p);
    await waitUntil(p, 'an answer', () => answers200(url, opts.init));
    return p;
  }

  async stop(): Promise<void> {
    await Promise.all(this.started.map((p) => stopProcess(p)));
  }
}

/** Every Redis key matching `pattern` (a stream, or the peer's storage): they have no expiry, so the bench deletes them. */
export async function deleteKeys(redisUrl: string, pattern: string): Promise<void> {
  const client = createClient({ url: redisUrl });
  await client.connect();
  try {
    const keys: string[] = [];
    for await (const batch of client.scanIterator({ MATCH: pattern, COUNT: 1000 })) keys.push(...batch);
    for (let i = 0; i < keys.length; i += 500) await client.del(keys.slice(i, i + 500));
  } finally {
    await client.close();
  }
}
