/**
 * The load generator's process (forked by load.ts): autocannon for request/answer loads, a
 * small loop of chains for refresh-token rotation (each request needs the previous answer), and
 * market orders followed to settlement (market-load.ts).
 */
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { proofSigner } from './dpop';
import {
  CONNECTIONS,
  type FixedLoad,
  percentile,
  type FromGenerator,
  type LoadResult,
  type LoadSpec,
  type OrderLoad,
  type RotationLoad,
  type Timing,
} from './load';
import { marketLoad } from './market-load';

const send = (message: FromGenerator) => process.send!(message);

process.on('message', (spec: LoadSpec) => {
  run(spec).then(
    (result) => send({ type: 'result', result }),
    (err: unknown) => send({ type: 'failed', message: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
  );
});
process.on('disconnect', () => process.exit(0));

async function run(spec: LoadSpec): Promise<LoadResult> {
  if (spec.kind === 'rotation') return rotate(spec);
  if (spec.kind === 'market') return marketLoad(spec, () => send({ type: 'window' }));
  const options: autocannon.Options =
    spec.kind === 'fixed' && spec.dpop
      ? dpopOptions(spec)
      : spec.kind === 'fixed'
        ? {
            url: spec.url,
            method: spec.method,
            headers: spec.headers,
            body: spec.body,
            connections: CONNECTIONS,
            ...(spec.expectBody === undefined ? {} : { expectBody: spec.expectBody }),
          }
        : orderOptions(spec);
  if (spec.warmupSeconds > 0) await autocannon({ ...options, duration: spec.warmupSeconds });
  send({ type: 'window' });
  let sample: string | undefined;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({ ...options, duration: spec.seconds }, (err, done) => (err ? reject(err) : resolve(done)));
    instance.on('response', (_client, status) => {
      if (status >= 300 && sample === undefined) sample = `HTTP ${status}`;
    });
  });
  const errors = result.non2xx + result.errors + result.mismatches;
  return {
    total: result.requests.total,
    errors,
    perSecond: result.requests.total / spec.seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ...(errors
      ? { sample: sample ?? `${result.errors} socket errors, ${result.timeouts} timeouts, ${result.mismatches} wrong bodies` }
      : {}),
  };
}

/** The fixed request with a fresh DPoP proof each time (a proof's jti is single use, so it cannot repeat). */
function dpopOptions(spec: FixedLoad): autocannon.Options {
  const url = new URL(spec.url);
  const { key, accessToken } = spec.dpop!;
  const proof = proofSigner(key);
  return {
    url: url.origin,
    connections: CONNECTIONS,
    // autocannon compares bodies only for a fixed request; here a non-2xx answer is what counts as wrong.
    requests: [
      {
        method: spec.method,
        path: `${url.pathname}${url.search}`,
        setupRequest: (request) => ({
          ...request,
          headers: { ...spec.headers, authorization: `DPoP ${accessToken}`, dpop: proof(spec.method, spec.url, accessToken) },
          ...(spec.body === undefined ? {} : { body: spec.body }),
        }),
      },
    ],
  };
}

/** Every order its own clientOrderId and Idempotency-Key (a retry of the same key would be answered from the first, not placed). */
function orderOptions(spec: OrderLoad): autocannon.Options {
  const url = new URL(spec.url);
  const run = randomBytes(4).toString('hex');
  let n = 0;
  return {
    url: url.origin,
    connections: CONNECTIONS,
    requests: [
      {
        method: 'POST',
        path: url.pathname,
        setupRequest: (request) => {
          const id = `bench-${run}-${n}`;
          const trader = spec.traders[n % spec.traders.length]!;
          const accountId = trader.accounts[Math.floor(n++ / spec.traders.length) % trader.accounts.length]!;
          return {
            ...request,
            headers: { authorization: `Bearer ${trader.token}`, 'content-type': 'application/json', 'idempotency-key': id },
            body: JSON.stringify({
              accountId,
              symbol: spec.symbol,
              side: 'BUY',
              type: 'LIMIT',
              timeInForce: 'GTC',
              quantity: '1',
              limitPrice: spec.limitPrice,
              clientOrderId: id,
            }),
          };
        },
      },
    ],
  };
}

/**
 * Each chain presents its refresh token with the client's credentials (HTTP Basic, RFC 6749
 * §2.3.1) and continues with the new one: rotation is sequential per grant, concurrent across
 * chains. A chain whose exchange fails stops (its token may be spent); every failure counts.
 */
async function rotate(spec: RotationLoad & Timing): Promise<LoadResult> {
  const url = new URL(spec.url);
  const pool = new Pool(url.origin, { connections: spec.refreshTokens.length, pipelining: 1 });
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(spec.clientId)}:${encodeURIComponent(spec.clientSecret)}`).toString('base64')}`;
  const tokens = [...spec.refreshTokens];
  let measuring = false;
  let stopped = false;
  let errors = 0;
  let sample: string | undefined;
  const latencies: number[] = [];

  const chain = async (i: number) => {
    while (!stopped) {
      const started = performance.now();
      let failure: string | undefined;
      try {
        const res = await pool.request({
          path: url.pathname,
          method: 'POST',
          headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens[i]! }).toString(),
        });
        const text = await res.body.text();
        if (res.statusCode === 200) tokens[i] = (JSON.parse(text) as { refresh_token: string }).refresh_token;
        else failure = `HTTP ${res.statusCode}: ${text.slice(0, 200)}`;
      } catch (err) {
        failure = (err as Error).message;
      }
      if (measuring && !stopped) {
        latencies.push(performance.now() - started);
        if (failure) errors++;
      }
      if (failure) {
        sample ??= failure;
        if (!measuring) errors++;
        return;
      }
    }
  };

  const chains = spec.refreshTokens.map((_, i) => chain(i));
  await sleep(spec.warmupSeconds * 1000);
  measuring = true;
  send({ type: 'window' });
  await sleep(spec.seconds * 1000);
  stopped = true;
  await Promise.all(chains);
  await pool.close();
  latencies.sort((a, b) => a - b);
  return {
    total: latencies.length,
    errors,
    perSecond: latencies.length / spec.seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    ...(sample ? { sample } : {}),
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
