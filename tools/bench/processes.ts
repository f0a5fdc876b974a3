/** Child processes the bench starts (each target as a user would run it), their logs, readiness and stopping. */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(__dirname, '../..');

export interface Started {
  name: string;
  child: ChildProcess;
  pid: number;
  log: string;
}

/** Starts `command` with exactly `env` (nothing leaks from the bench's own environment), its output to `<logDir>/<name>.log`. */
export function startProcess(
  name: string,
  command: string,
  args: string[],
  env: Record<string, string>,
  logDir: string,
  cwd = ROOT,
): Started {
  const log = join(logDir, `${name}.log`);
  const fd = openSync(log, 'a');
  const child = spawn(command, args, {
    cwd,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', ...env },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  if (!child.pid) throw new Error(`${name}: could not start ${command}`);
  return { name, child, pid: child.pid, log };
}

/** A node process running TypeScript through tsx, as `npm start` and the tools do. */
export const startTsx = (name: string, file: string, env: Record<string, string>, logDir: string, cwd = ROOT, nodeFlags: string[] = []) =>
  startProcess(name, process.execPath, [...nodeFlags, '--import', 'tsx', file], env, logDir, cwd);

const logTail = (p: Started, lines = 25) => {
  try {
    return readFileSync(p.log, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

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

/** True once `url` answers 200. */
export const answers200 = async (url: string, init?: RequestInit) => {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(3000) });
  await res.arrayBuffer();
  return res.status === 200;
};

/** SIGTERM, then SIGKILL after `graceMs`. */
export async function stopProcess(p: Started, graceMs = 20_000): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => p.child.once('exit', () => resolve()));
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** A port nothing listens on now (the kernel's choice). */
export { freePort } from '@trading/testing';

/** A budget no bench load reaches in its minute: the limits run (and cost what they cost) but never refuse. */
const NEVER_BINDS = 1_000_000_000;

/**
 * The edges' request budgets for the targets. On by default, as every deployment runs them, with
 * budgets no load reaches: what is measured is their cost, never a refusal. `BENCH_RATE_LIMITS=off`
 * sets them to 0 (not counted at all), as the runs before round five did.
 */
export function rateLimitsEnv(namespace: string): Record<string, string> {
  const budget = rateLimitsMeasured() ? String(NEVER_BINDS) : '0';
  return {
    API_RATE_LIMIT_PER_MINUTE: budget,
    API_ORDER_RATE_LIMIT_PER_MINUTE: budget,
    API_ADDRESS_RATE_LIMIT_PER_MINUTE: budget,
    API_APP_RATE_LIMIT_PER_MINUTE: budget,
    API_RATE_LIMIT_NAMESPACE: namespace,
  };
}

/** BENCH_RATE_LIMITS: unset or `on` (the default), `off`; anything else stops the bench with the reason. */
export function rateLimitsMeasured(): boolean {
  const value = process.env['BENCH_RATE_LIMITS'] ?? 'on';
  if (value !== 'on' && value !== 'off') throw new Error(`BENCH_RATE_LIMITS must be on or off, not ${JSON.stringify(value)}`);
  return value === 'on';
}
