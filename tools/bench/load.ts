/**
 * The load generator runs in a process of its own (forked here, `load-generator.ts`), so it never
 * shares an event loop with a target or with the bench's bookkeeping. Each run warms the target,
 * says when the measured window starts (the bench reads every process's CPU time then), and
 * answers the window's figures.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { DpopKey } from './dpop';

export const CONNECTIONS = 50;
export const ROTATION_CHAINS = 32;
/** Market orders in flight at once (each on an account of its own: accounts ≥ this). */
export const MARKET_CONCURRENCY = 16;

/** One fixed request, repeated: its answer must equal the preflight's (`expectBody`) when given. */
export interface FixedLoad {
  kind: 'fixed';
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  expectBody?: string;
  /** A DPoP-bound token: every request gets `Authorization: DPoP` and a fresh proof of this key (RFC 9449). */
  dpop?: { key: DpopKey; accessToken: string };
}

/** Limit buys that rest far below the market, each with its own clientOrderId and Idempotency-Key, across `accounts`. */
export interface OrderLoad {
  kind: 'orders';
  url: string;
  /** Whose orders: each trader's PAT session and accounts, taken in turn. */
  traders: Array<{ token: string; accounts: string[] }>;
  symbol: string;
  limitPrice: string;
}

/** `chains` refresh tokens, each exchanged for the next one as soon as its answer arrives. */
export interface RotationLoad {
  kind: 'rotation';
  url: string;
  clientId: string;
  clientSecret: string;
  refreshTokens: string[];
}

/**
 * Market buys of `quantity`, `concurrency` at a time, each on an account with no other order of
 * the load in flight; each timed from placement until the fill is applied in banking (the hold
 * released, the cash paid) and in accounts (the position grown by `quantity`).
 */
export interface MarketLoad {
  kind: 'market';
  /** {base_url}: the facade's /v1. */
  api: string;
  traders: Array<{ token: string; accounts: string[] }>;
  symbol: string;
  quantity: string;
  concurrency: number;
  /**
   * PostgreSQL URLs of banking's and accounts' databases: read by primary key to learn when a fill
   * is applied, so that the REST reads that confirm it are not a polling storm of their own.
   */
  databases: { banking: string; accounts: string };
}

/** How long to warm the target, then how long to measure it. */
export interface Timing {
  warmupSeconds: number;
  seconds: number;
}

export type LoadSpec = (FixedLoad | OrderLoad | RotationLoad | MarketLoad) & Timing;

export interface LoadResult {
  /** Requests answered in the window (of any status). */
  total: number;
  /** Non-2xx answers, socket errors, timeouts and wrong bodies. */
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** The first wrong answer seen, to name the problem. */
  sample?: string;
}

export type FromGenerator = { type: 'window' } | { type: 'result'; result: LoadResult } | { type: 'failed'; message: string };

/** The load generator's process, reused for every target. */
export class LoadGenerator {
  private constructor(private readonly child: ChildProcess) {}

  static start(): LoadGenerator {
    const child = fork(join(__dirname, 'load-generator.ts'), [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new LoadGenerator(child);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Runs one load; `onWindow` is called as the measured window starts. */
  run(spec: LoadSpec, onWindow: () => void): Promise<LoadResult> {
    return new Promise((resolve, reject) => {
      const onMessage = (message: FromGenerator) => {
        if (message.type === 'window') return onWindow();
        this.child.off('message', onMessage);
        this.child.off('exit', onExit);
        if (message.type === 'result') resolve(message.result);
        else reject(new Error(message.message));
      };
      const onExit = (code: number | null) => reject(new Error(`the load generator exited (${code})`));
      this.child.on('message', onMessage);
      this.child.once('exit', onExit);
      this.child.send(spec);
    });
  }

  stop(): void {
    if (this.child.exitCode === null) this.child.kill('SIGTERM');
  }
}

/** Nearest-rank percentile of ascending `sorted` values (`p` in 0..100). */
export function percentile(sorted: readonly number[], p: number): number {
  if (!sorted.length) return 0;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}
