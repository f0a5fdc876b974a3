/** The run's settings, and one measurement: a target's load, with every process involved read around its window. */
import { TEST_POSTGRES_URL } from '@trading/testing';
import { LoadGenerator, type FixedLoad, type Load } from './load';
import { postgresServer, startCpuWindow, type Watched } from './proc';
import { labelOf, type Row, type RowName } from './report';

function wholeNumber(name: string, fallback: number, min: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be a whole number ≥ ${min}, got "${value}"`);
  return n;
}

export const SECONDS = wholeNumber('BENCH_SECONDS', 10, 1);
export const WARMUP_SECONDS = wholeNumber('BENCH_WARMUP_SECONDS', 20, 0);
const rateLimits = process.env['BENCH_RATE_LIMITS'] ?? 'on';
if (rateLimits !== 'on' && rateLimits !== 'off') throw new Error(`BENCH_RATE_LIMITS must be on or off, not ${JSON.stringify(rateLimits)}`);
/** The edges' request budgets: on (the default), as every deployment runs them, or `off` (0); read at start, before anything is built. */
export const RATE_LIMITS = rateLimits === 'on';
export const POSTGRES_SERVER = TEST_POSTGRES_URL.replace(/\/[^/]*$/, '');
/** Above this share of wrong answers a figure measures the failure path, not the target. */
const MAX_ERROR_RATE = 0.01;
const UNIT = {
  fixed: 'req/s',
  rotation: 'rotations/s',
  orders: 'orders/s',
  'orders-paced': 'orders/s',
  market: 'fills/s',
  'webhook-posts': 'deliveries/s',
} as const;

/** The processes a row watches; a function when they are known only as its window starts (the all-in-one's workers). */
export type Watching = Watched[] | (() => Watched[]);
/** What a drain did: `total` done in `seconds`, `errors` of them wrongly (`sample` says how). */
export type Drained = { total: number; errors: number; seconds: number; sample?: string };

export const progress = (message: string) => process.stderr.write(`${message}\n`);

export class Bench {
  readonly rows: Row[] = [];
  readonly failures: string[] = [];
  readonly generator = new LoadGenerator();

  /**
   * `load` as row `name`, the load generator and the local PostgreSQL server watched beside the
   * target's processes (on this machine they share the cores).
   */
  async measure(name: RowName, load: Load, watched: Watching, path: string = labelOf(name)): Promise<void> {
    progress(`measuring ${path}: ${WARMUP_SECONDS} s warm-up, ${SECONDS} s window…`);
    let window: ReturnType<typeof startCpuWindow> | undefined;
    const result = await this.generator.run({ ...load, warmupSeconds: WARMUP_SECONDS, seconds: SECONDS }, () => {
      window = startCpuWindow([
        ...(typeof watched === 'function' ? watched() : watched),
        { name: 'load', pid: this.generator.pid },
        ...postgresServer(),
      ]);
    });
    const { cpu, machine } = window?.finish() ?? { cpu: [] };
    const { perSecond, p50, p99, total, errors } = result;
    this.rows.push({ name, path, unit: UNIT[load.kind], perSecond, p50, p99, total, errors, cpu, ...(machine ? { machine } : {}) });
    if (errors > total * MAX_ERROR_RATE)
      this.failures.push(`${path}: ${errors} of ${total} answers wrong (> ${MAX_ERROR_RATE * 100}%), e.g. ${result.sample}`);
  }

  /**
   * One request repeated. It is sent once first, so a target that is down or refusing is not timed
   * at its error path: status 200 and no GraphQL "errors" (they come back as 200); its answer is
   * what every request of the load must get. With `dpop`, a fresh proof of its key on each
   * (`init` carries the first one's).
   */
  async fixed(name: RowName, url: string, init: Omit<FixedLoad, 'kind' | 'url' | 'expectBody'>, watched: Watching, path?: string) {
    const { dpop: _, ...request } = init;
    const res = await fetch(url, request);
    const expectBody = await res.text();
    if (res.status !== 200 || /"errors"\s*:/.test(expectBody))
      throw new Error(`${path ?? labelOf(name)}: preflight answered ${res.status}: ${expectBody.slice(0, 400)}`);
    await this.measure(name, { kind: 'fixed', url, ...init, expectBody }, watched, path);
  }

  /**
   * Work that is not a load of requests but a fixed amount done by the target itself (a queue
   * drained): `run` answers how much was done, how much of it wrongly, and in how many seconds;
   * the processes are read from when it calls `onWindow` (its timing starts) to its end.
   */
  async drained(name: RowName, watched: Watched[], run: (onWindow: () => void) => Promise<Drained>): Promise<void> {
    const path = labelOf(name);
    progress(`measuring ${path}…`);
    let window: ReturnType<typeof startCpuWindow> | undefined;
    const { total, errors, seconds, sample } = await run(() => (window = startCpuWindow([...watched, ...postgresServer()])));
    const { cpu, machine } = window?.finish() ?? { cpu: [] };
    const row = { name, path, unit: 'deliveries/s' as const, perSecond: total / seconds, total, errors, cpu };
    this.rows.push({ ...row, ...(machine ? { machine } : {}) });
    if (errors > total * MAX_ERROR_RATE)
      this.failures.push(`${path}: ${errors} of ${total} wrong (> ${MAX_ERROR_RATE * 100}%), e.g. ${sample}`);
  }

  /** Refresh-token chains at `url`, one per token, each exchanging its token for the next (HTTP Basic, a form body). */
  rotation(name: RowName, url: string, app: { clientId: string; clientSecret: string }, refreshTokens: string[], watched: Watching) {
    return this.measure(name, { kind: 'rotation', url, clientId: app.clientId, clientSecret: app.clientSecret, refreshTokens }, watched);
  }
}
