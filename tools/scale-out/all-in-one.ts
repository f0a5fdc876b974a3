/**
 * The all-in-one (`npm start`: the platform bundle, a primary and two workers that each run every
 * app) against the run's PostgreSQL and a Redis of its own, so that its data stores can fail under
 * it too. Once, after Redis was killed and PostgreSQL crashed and both came back, it closed every
 * port on SIGTERM and never exited; this is where that is shown not to happen again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PrivatePostgres } from './postgres';
import { exited, statusOf, terminateWithin, waitFor } from './processes';
import type { PrivateRedis } from './redis';
import { ALL_IN_ONE_PORTS, type Ports } from './services';

export const ALL_IN_ONE_WORKERS = 2;

export class AllInOne {
  private child: ChildProcess | undefined;
  private readonly log: string;
  readonly ports: Record<(typeof ALL_IN_ONE_PORTS)[number], number>;

  constructor(
    private readonly root: string,
    private readonly dir: string,
    ports: Ports,
    private readonly pg: PrivatePostgres,
    readonly redis: PrivateRedis,
  ) {
    this.log = join(dir, 'all-in-one.log');
    this.ports = Object.fromEntries(ALL_IN_ONE_PORTS.map((name, n) => [name, ports.allInOne(n)])) as AllInOne['ports'];
  }

  get apiUrl(): string {
    return `http://127.0.0.1:${this.ports.FACADE_PORT}/v1`;
  }

  start(): void {
    const out = openSync(this.log, 'a');
    this.child = spawn(process.execPath, ['--enable-source-maps', join(this.root, 'dist/apps/platform/main.js')], {
      env: {
        PATH: process.env['PATH'],
        HOME: process.env['HOME'] ?? '/tmp',
        LOG_LEVEL: 'warn',
        DATABASE_URL: this.pg.url().replace(/\/[^/]*$/, ''),
        REDIS_URL: this.redis.url(),
        PLATFORM_DB_PREFIX: 'aio_',
        PLATFORM_DATA_DIR: join(this.dir, 'all-in-one-data'),
        PLATFORM_WORKERS: String(ALL_IN_ONE_WORKERS),
        AUTH_ADMIN_TOKEN: `aio-admin-${randomBytes(16).toString('hex')}`,
        // A load test: the per-token and per-address budgets would refuse it.
        API_RATE_LIMIT_PER_MINUTE: '0',
        API_ORDER_RATE_LIMIT_PER_MINUTE: '0',
        API_ADDRESS_RATE_LIMIT_PER_MINUTE: '0',
        ...Object.fromEntries(Object.entries(this.ports).map(([name, port]) => [name, String(port)])),
      },
      stdio: ['ignore', out, out],
    });
  }

  output(): string {
    return readFileSync(this.log, 'utf8');
  }

  running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Its workers' pids (the primary's children, from /proc). */
  workers(): number[] {
    const pid = this.child?.pid;
    try {
      return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  }

  /** The banner is printed once every worker is ready; it names the file that holds the demo PAT. */
  async waitStarted(timeoutMs: number): Promise<string> {
    await waitFor('the all-in-one banner', timeoutMs, () => {
      if (!this.running()) throw new Error(`the all-in-one exited during start (see ${this.log})`);
      return this.output().includes('Ctrl-C stops everything');
    }).catch((err: Error) => {
      throw this.running() ? err : new Error(`the all-in-one exited during start (see ${this.log})`);
    });
    const file = /Demo secrets\s+(\S+)/.exec(this.output())?.[1];
    if (!file) throw new Error(`the all-in-one banner names no demo credentials file (see ${this.log})`);
    return (JSON.parse(readFileSync(file, 'utf8')) as { pat: string }).pat;
  }

  /** Every app's internal /readyz answers 200 (which names the data stores each one needs). */
  async waitReady(timeoutMs: number): Promise<void> {
    const internal = [
      this.ports.FACADE_INTERNAL_PORT,
      this.ports.AUTH_INTERNAL_PORT,
      this.ports.GATEWAY_INTERNAL_PORT,
      this.ports.ACCOUNTS_INTERNAL_PORT,
      this.ports.BANKING_INTERNAL_PORT,
      this.ports.OMS_INTERNAL_PORT,
    ];
    await waitFor('the all-in-one ready again', timeoutMs, async () => {
      if (!this.running()) throw new Error(`the all-in-one exited (see ${this.log})`);
      const answers = await Promise.all(internal.map((port) => statusOf(`http://127.0.0.1:${port}/readyz`)));
      return answers.every((status) => status === 200);
    });
  }

  /** SIGTERM to the primary; its exit code and how long it took (undefined: still running after `graceMs`, then SIGKILL). */
  async terminate(graceMs: number): Promise<{ code: number | string | undefined; ms: number; workersLeft: number[] }> {
    const child = this.child;
    if (!child || !this.running()) return { code: child?.exitCode ?? undefined, ms: 0, workersLeft: [] };
    const workers = this.workers();
    const { code, ms } = await terminateWithin(child, graceMs);
    return { code, ms, workersLeft: workers.filter(alive) };
  }

  async kill(): Promise<void> {
    if (!this.child || !this.running()) return;
    const workers = this.workers();
    this.child.kill('SIGKILL');
    for (const pid of workers.filter(alive)) process.kill(pid, 'SIGKILL');
    await exited(this.child, 5000);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
