/**
 * Steady load through the load balancer, and what it counted. Every request is accounted for:
 * sent = answered (by status) + failed to answer (connection error or timeout). A load tool that
 * reconnects silently when a connection ends under a request would hide exactly what a rolling
 * restart must show.
 */

export interface LoadResult {
  sent: number;
  /** Answers other than 2xx, plus connection errors and timeouts. */
  failures: number;
  fiveXx: number;
  p99: number;
  /** By status, and `error` for no answer. */
  codes: Record<string, number>;
}

export interface RunningLoad {
  stop(): Promise<LoadResult>;
}

/** Counts answers and their latencies; `failed(code)` says which codes are failures. */
class Tally {
  sent = 0;
  readonly codes: Record<string, number> = {};
  private readonly latencies: number[] = [];

  async time(request: () => Promise<Response>): Promise<void> {
    this.sent++;
    const started = Date.now();
    let code: string;
    try {
      const res = await request();
      await res.arrayBuffer();
      code = String(res.status);
    } catch {
      code = 'error';
    }
    this.codes[code] = (this.codes[code] ?? 0) + 1;
    this.latencies.push(Date.now() - started);
  }

  result(failed: (code: string) => boolean): LoadResult {
    const count = (pick: (code: string) => boolean) =>
      Object.entries(this.codes)
        .filter(([code]) => pick(code))
        .reduce((n, [, c]) => n + c, 0);
    const sorted = [...this.latencies].sort((a, b) => a - b);
    const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;
    return { sent: this.sent, failures: count(failed), fiveXx: count((code) => code.startsWith('5')), p99, codes: this.codes };
  }
}

/** `loops` sequential request loops, each paced to `perLoopPerSecond`, until stopped. */
function paced(loops: number, perLoopPerSecond: number, request: (n: number) => Promise<void>): { stop(): Promise<void> } {
  let running = true;
  let n = 0;
  const loop = async () => {
    while (running) {
      const started = Date.now();
      await request(n++);
      await new Promise((r) => setTimeout(r, Math.max(0, 1000 / perLoopPerSecond - (Date.now() - started))));
    }
  };
  const all = Promise.all(Array.from({ length: loops }, loop));
  return {
    async stop() {
      running = false;
      await all;
    },
  };
}

/** GETs `paths` in turn at about `rate` requests a second in total (6 connections' worth of loops) until stopped. */
export function steadyLoad(baseUrl: string, token: string, paths: string[], rate = 30): RunningLoad {
  const tally = new Tally();
  const loops = 6;
  const running = paced(loops, rate / loops, (n) =>
    tally.time(() =>
      fetch(`${baseUrl}${paths[n % paths.length]}`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(10_000) }),
    ),
  );
  return {
    async stop() {
      await running.stop();
      return tally.result((code) => !code.startsWith('2'));
    },
  };
}

/**
 * Market orders placed one after another at `perSecond` (each with its own Idempotency-Key),
 * alternating between `accounts`, until stopped: fills, holds and settlement events flow while
 * instances restart. Every answer but 201 is a failure.
 */
export function orderFlow(
  apiUrl: string,
  token: string,
  accounts: string[],
  symbol: string,
  perSecond = 4,
): { stop(): Promise<LoadResult & { accepted: number }> } {
  const tally = new Tally();
  const running = paced(1, perSecond, (n) => {
    const key = `scale-out-flow-${process.pid}-${n}`;
    return tally.time(() =>
      fetch(`${apiUrl}/oms/order`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({
          accountId: accounts[n % accounts.length],
          symbol,
          side: 'BUY',
          type: 'MARKET',
          timeInForce: 'DAY',
          quantity: '1',
          clientOrderId: key,
        }),
        signal: AbortSignal.timeout(10_000),
      }),
    );
  });
  return {
    async stop() {
      await running.stop();
      return { ...tally.result((code) => code !== '201'), accepted: tally.codes['201'] ?? 0 };
    },
  };
}
