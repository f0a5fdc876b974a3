/**
 * The load generator runs in a process of its own (`load-generator.ts`, forked here), so it never
 * shares an event loop with a target or with the bench's bookkeeping. Each run warms the target,
 * says when the measured window starts (the bench reads every process's CPU time then), and
 * answers the window's figures.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DpopKey } from './dpop';

export const CONNECTIONS = 50;
export const ROTATION_CHAINS = 32;
/** Users placing orders side by side in the spread order and market loads (besides the one user of the first). */
export const ORDER_TRADERS = 24;
/** Orders arriving together each second in the open-loop order rows. */
export const ORDER_BURST = 50;
/** Market orders in flight at once (each on an account of its own: accounts ≥ this). */
export const MARKET_CONCURRENCY = 16;

/** Whose orders: each trader's PAT session and accounts, taken in turn. */
type Traders = Array<{ token: string; accounts: string[] }>;

/** One request, repeated: its answer must equal the preflight's; with `dpop`, `Authorization: DPoP` and a fresh proof each time. */
export type FixedLoad = { kind: 'fixed'; url: string; expectBody: string; dpop?: { key: DpopKey; accessToken: string } } & Request;
type Request = { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string };
/** Limit buys that rest far below the market (`limitBuy`), each with its own clientOrderId and Idempotency-Key. */
type OrderLoad = { kind: 'orders'; url: string; traders: Traders; symbol: string; limitPrice: string };
/**
 * The same limit buys sent at a fixed pace whatever the answers take (an open loop, as orders
 * arrive at a broker): `burst` at once every `everyMs`, each timed from when it was due; with
 * `everyMs` 0, each burst after the last one's answers (one order at a time when `burst` is 1).
 */
export type PacedOrderLoad = Omit<OrderLoad, 'kind'> & { kind: 'orders-paced'; burst: number; everyMs: number };
/** Refresh-token chains, each exchanging its token for the next one as soon as its answer arrives. */
export type RotationLoad = { kind: 'rotation'; url: string; clientId: string; clientSecret: string; refreshTokens: string[] };
/** Market buys through the facade (`api`: its /v1), each followed until banking and accounts (`databases`, their URLs) apply its fill. */
export type MarketLoad = {
  kind: 'market';
  api: string;
  traders: Traders;
  symbol: string;
  databases: Record<'banking' | 'accounts', string>;
};
/**
 * Webhook bodies posted straight at a receiver, as a sender with no queue would: `urls.length`
 * loops side by side (one connection each), each body built and signed afresh per Standard
 * Webhooks with `secret`, an event of `type` carrying `data`.
 */
export type WebhookPostLoad = { kind: 'webhook-posts'; urls: string[]; secret: string; type: string; data: Record<string, unknown> };
/** How long to warm the target, then how long to measure it. */
export type Timing = { warmupSeconds: number; seconds: number };

export type Load = FixedLoad | OrderLoad | PacedOrderLoad | RotationLoad | MarketLoad | WebhookPostLoad;
export type LoadSpec = Load & Timing;

export interface LoadResult {
  /** Requests answered in the window (of any status), and the wrong ones: non-2xx, socket errors, timeouts, wrong bodies. */
  total: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** The first wrong answer seen, to name the problem. */
  sample?: string;
}

export type FromGenerator = { type: 'window' } | { type: 'result'; result: LoadResult } | { type: 'failed'; message: string };

/** A limit buy of one share at `limitPrice`, as the order load and its preflight send it. */
export function limitBuy(accountId: string, symbol: string, limitPrice: string, clientOrderId?: string): string {
  const order = { accountId, symbol, side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', quantity: '1', limitPrice };
  return JSON.stringify(clientOrderId ? { ...order, clientOrderId } : order);
}

/** The load generator's process, reused for every target. */
export class LoadGenerator {
  private readonly child: ChildProcess = fork(join(__dirname, 'load-generator.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });

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

/** Loops that time their own requests: the warm-up, then the window (`measuring`, `onWindow` as it starts), then `stopped`. */
export async function timeWindow(timing: Timing, onWindow: () => void, state: { measuring: boolean; stopped: boolean }): Promise<void> {
  await sleep(timing.warmupSeconds * 1000);
  state.measuring = true;
  onWindow();
  await sleep(timing.seconds * 1000);
  state.stopped = true;
}

/** The window's figures from the latencies (ms) it timed. */
export function resultOf(latencies: number[], total: number, errors: number, seconds: number, sample?: string): LoadResult {
  latencies.sort((a, b) => a - b);
  const [p50, p99] = [percentile(latencies, 50), percentile(latencies, 99)];
  return { total, errors, perSecond: latencies.length / seconds, p50, p99, ...(sample ? { sample } : {}) };
}
