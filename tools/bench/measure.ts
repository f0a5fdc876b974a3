/** The run's settings, and one measurement: a target's load, with every process involved read around its window. */
import { TEST_POSTGRES_URL } from '@trading/testing';
import { startInstructionCount } from './instructions';
import { LoadGenerator, type FixedLoad, type Load } from './load';
import { startPgWaits } from './pg-waits';
import { postgresServer, startCpuWindow, type Watched } from './proc';
import { rateLimitsMeasured } from './processes';
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
/** Read at start, so a bad BENCH_RATE_LIMITS stops the run before anything is built. */
export const RATE_LIMITS = rateLimitsMeasured();
export const POSTGRES_SERVER = TEST_POSTGRES_URL.replace(/\/[^/]*$/, '');
/** Above this share of wrong answers a figure measures the failure path, not the target. */
const MAX_ERROR_RATE = 0.01;
const UNIT = { fixed: 'req/s', rotation: 'rotations/s', orders: 'orders/s', market: 'fills/s' } as const;

export const progress = (message: string) => process.stderr.write(`${message}\n`);

export class Bench {
  readonly rows: Row[] = [];
  readonly failures: string[] = [];
  readonly generator = new LoadGenerator();
  /** `databases`: the prefix of this run's database names, whose backends a money path's window samples. */
  constructor(private readonly databases: string) {}

  /**
   * One request first, so a target that is down or refusing is not timed at its error path:
   * status 200 and no GraphQL "errors" (they come back as 200). Its answer is what every request
   * of the load must get.
   */
  async preflight(name: string, url: string, init: RequestInit): Promise<string> {
    const res = await fetch(url, init);
    const text = await res.text();
    if (res.status !== 200 || /"errors"\s*:/.test(text))
      throw new Error(`${name}: preflight answered ${res.status}: ${text.slice(0, 400)}`);
    return text;
  }

  /**
   * `load` as row `name`, the load generator and the local PostgreSQL server watched beside the
   * target's processes (on this machine they share the cores). The money paths (orders, market)
   * also sample what the database waits on; they and rotation count instructions where perf can.
   */
  async measure(name: RowName, load: Load, watched: () => Watched[], path: string = labelOf(name)): Promise<void> {
    progress(`measuring ${path}: ${WARMUP_SECONDS} s warm-up, ${SECONDS} s window…`);
    const processes = () => [...watched(), { name: 'load', pid: this.generator.pid }, ...postgresServer()];
    const moneyPath = load.kind === 'orders' || load.kind === 'market';
    let window: ReturnType<typeof startCpuWindow> | undefined;
    let sampling: ReturnType<typeof startPgWaits> | undefined;
    let counting: ReturnType<typeof startInstructionCount> | undefined;
    let result: Awaited<ReturnType<LoadGenerator['run']>>;
    let waits: Row['waits'];
    let instructions: Row['instructions'];
    try {
      result = await this.generator.run({ ...load, warmupSeconds: WARMUP_SECONDS, seconds: SECONDS }, () => {
        window = startCpuWindow(processes());
        if (moneyPath) sampling = startPgWaits(POSTGRES_SERVER, this.databases);
        if (load.kind !== 'fixed') counting = startInstructionCount(processes());
      });
    } finally {
      // Its connection closed even when the load failed, or the bench would not exit; perf stopped likewise.
      waits = await (await sampling)?.finish();
      instructions = await counting?.finish();
    }
    const { cpu, machine } = window?.finish() ?? { cpu: [] };
    const { perSecond, p50, p99, total, errors } = result;
    const extra = { ...(machine ? { machine } : {}), ...(waits ? { waits } : {}), ...(instructions ? { instructions } : {}) };
    this.rows.push({ name, path, unit: UNIT[load.kind], perSecond, p50, p99, total, errors, cpu, ...extra });
    if (errors > total * MAX_ERROR_RATE)
      this.failures.push(`${path}: ${errors} of ${total} answers wrong (> ${MAX_ERROR_RATE * 100}%), e.g. ${result.sample}`);
  }

  /** One request repeated, its answer checked first; with `dpop`, a fresh proof of its key on each (`init` carries the preflight's). */
  async fixed(name: RowName, url: string, init: Omit<FixedLoad, 'kind' | 'url' | 'expectBody'>, watched: () => Watched[], path?: string) {
    const { dpop: _, ...request } = init;
    const expectBody = await this.preflight(path ?? labelOf(name), url, request);
    await this.measure(name, { kind: 'fixed', url, ...init, expectBody }, watched, path);
  }

  /** Refresh-token chains at `url`, one per token, each exchanging its token for the next (HTTP Basic, a form body). */
  async rotation(
    name: RowName,
    url: string,
    client: { clientId: string; clientSecret: string },
    refreshTokens: string[],
    watched: () => Watched[],
  ) {
    const { clientId, clientSecret } = client;
    await this.measure(name, { kind: 'rotation', url, clientId, clientSecret, refreshTokens }, watched);
  }
}
