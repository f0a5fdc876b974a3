/** Steady load through the load balancer (autocannon), and what it counted. */
import autocannon from 'autocannon';

export interface LoadResult {
  sent: number;
  /** Answers other than 2xx, plus connection errors and timeouts. */
  failures: number;
  fiveXx: number;
  p99: number;
  codes: Record<string, number>;
}

export interface RunningLoad {
  stop(): Promise<LoadResult>;
}

/** GETs `paths` in turn at `rate` requests a second in total until stopped. */
export function steadyLoad(baseUrl: string, token: string, paths: string[], rate = 30): RunningLoad {
  let instance: autocannon.Instance | undefined;
  const result = new Promise<autocannon.Result>((resolve, reject) => {
    instance = autocannon(
      {
        url: baseUrl,
        connections: 6,
        overallRate: rate,
        duration: 3600,
        timeout: 10,
        headers: { authorization: `Bearer ${token}` },
        requests: paths.map((path) => ({ method: 'GET' as const, path })),
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
  });
  return {
    async stop() {
      instance!.stop();
      const r = await result;
      const codes = Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => [code, s.count ?? 0]));
      const fiveXx = Object.entries(codes)
        .filter(([code]) => code.startsWith('5'))
        .reduce((n, [, c]) => n + c, 0);
      return { sent: r.requests.sent, failures: r.non2xx + r.errors + r.timeouts, fiveXx, p99: r.latency.p99, codes };
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
  let running = true;
  const codes: Record<string, number> = {};
  const latencies: number[] = [];
  let sent = 0;
  const loop = (async () => {
    while (running) {
      const started = Date.now();
      const n = sent++;
      const key = `scale-out-flow-${process.pid}-${n}`;
      let code: string;
      try {
        const res = await fetch(`${apiUrl}/oms/order`, {
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
        });
        await res.arrayBuffer();
        code = String(res.status);
      } catch {
        code = 'error';
      }
      codes[code] = (codes[code] ?? 0) + 1;
      latencies.push(Date.now() - started);
      await new Promise((r) => setTimeout(r, Math.max(0, 1000 / perSecond - (Date.now() - started))));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      const accepted = codes['201'] ?? 0;
      const fiveXx = Object.entries(codes)
        .filter(([code]) => code.startsWith('5'))
        .reduce((total, [, count]) => total + count, 0);
      const sorted = [...latencies].sort((a, b) => a - b);
      const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;
      return { sent, accepted, failures: sent - accepted, fiveXx, p99, codes };
    },
  };
}
