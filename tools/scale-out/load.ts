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
