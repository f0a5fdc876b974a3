/**
 * The load generator's process (forked by load.ts): autocannon for request/answer loads, chains
 * for refresh-token rotation (each request needs the previous answer), market orders followed
 * to settlement (market-load.ts), and webhook bodies posted straight at a receiver.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { Webhook } from 'standardwebhooks';
import { Pool } from 'undici';
import { proofSigner } from './dpop';
import { CONNECTIONS, limitBuy, resultOf, timeWindow } from './load';
import type { FromGenerator, LoadResult, LoadSpec, PacedOrderLoad, RotationLoad, Timing, WebhookPostLoad } from './load';
import { marketLoad } from './market-load';
import { basicAuth } from './oidc-peer/grants';

const send = (message: FromGenerator) => process.send!(message);

process.on('message', (spec: LoadSpec) => {
  run(spec).then(
    (result) => send({ type: 'result', result }),
    (err: unknown) => send({ type: 'failed', message: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
  );
});
process.on('disconnect', () => process.exit(0));

/** autocannon with each request made afresh by `make`: a DPoP proof's jti, an order's id and Idempotency-Key are single use. */
function fresh(url: string, method: 'GET' | 'POST', make: () => { headers: Record<string, string>; body?: string }): autocannon.Options {
  const { origin, pathname, search } = new URL(url);
  return {
    url: origin,
    connections: CONNECTIONS,
    requests: [{ method, path: `${pathname}${search}`, setupRequest: (r) => ({ ...r, ...make() }) }],
  };
}

/** Each next limit buy of an order load: its trader's session, an account in turn, its own clientOrderId and Idempotency-Key. */
function orderMaker(spec: Pick<PacedOrderLoad, 'traders' | 'symbol' | 'limitPrice'>) {
  const run = randomBytes(4).toString('hex');
  let n = 0;
  return () => {
    const id = `bench-${run}-${n}`;
    const trader = spec.traders[n % spec.traders.length]!;
    const accountId = trader.accounts[Math.floor(n++ / spec.traders.length) % trader.accounts.length]!;
    const headers = { authorization: `Bearer ${trader.token}`, 'content-type': 'application/json', 'idempotency-key': id };
    return { headers, body: limitBuy(accountId, spec.symbol, spec.limitPrice, id) };
  };
}

function optionsOf(spec: LoadSpec & { kind: 'fixed' | 'orders' }): autocannon.Options {
  if (spec.kind === 'orders') return fresh(spec.url, 'POST', orderMaker(spec));
  const { url, method, headers, body, expectBody, dpop } = spec;
  if (!dpop) return { url, method, headers, body, connections: CONNECTIONS, expectBody };
  // autocannon compares bodies only for a fixed request; here a non-2xx answer is what counts as wrong.
  const proof = proofSigner(dpop.key);
  return fresh(url, method, () => ({
    headers: { ...headers, authorization: `DPoP ${dpop.accessToken}`, dpop: proof(method, url, dpop.accessToken) },
    ...(body === undefined ? {} : { body }),
  }));
}

async function run(spec: LoadSpec): Promise<LoadResult> {
  if (spec.kind === 'rotation') return rotate(spec);
  if (spec.kind === 'market') return marketLoad(spec, () => send({ type: 'window' }));
  if (spec.kind === 'webhook-posts') return postWebhooks(spec);
  if (spec.kind === 'orders-paced') return pacedOrders(spec);
  const options = optionsOf(spec);
  if (spec.warmupSeconds > 0) await autocannon({ ...options, duration: spec.warmupSeconds });
  send({ type: 'window' });
  let sample: string | undefined;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({ ...options, duration: spec.seconds }, (err, done) => (err ? reject(err) : resolve(done)));
    instance.on('response', (_client, status) => {
      if (status >= 300 && sample === undefined) sample = `HTTP ${status}`;
    });
  });
  const [errors, { total }, { p50, p99 }] = [result.non2xx + result.errors + result.mismatches, result.requests, result.latency];
  sample ??= `${result.errors} socket errors, ${result.timeouts} timeouts, ${result.mismatches} wrong bodies`;
  return { total, errors, perSecond: total / spec.seconds, p50, p99, ...(errors ? { sample } : {}) };
}

/**
 * Each chain presents its refresh token with the client's credentials (HTTP Basic) and continues
 * with the new one: sequential per grant, concurrent across chains. A chain whose exchange fails
 * stops (its token may be spent); every failure counts.
 */
async function rotate(spec: RotationLoad & Timing): Promise<LoadResult> {
  const url = new URL(spec.url);
  const pool = new Pool(url.origin, { connections: spec.refreshTokens.length, pipelining: 1 });
  const headers = { authorization: basicAuth(spec.clientId, spec.clientSecret), 'content-type': 'application/x-www-form-urlencoded' };
  const tokens = [...spec.refreshTokens];
  const state = { measuring: false, stopped: false };
  const latencies: number[] = [];
  let [errors, sample] = [0, undefined as string | undefined];
  const chain = async (i: number) => {
    while (!state.stopped) {
      const started = performance.now();
      let failure: string | undefined;
      try {
        const body = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens[i]! }).toString();
        const res = await pool.request({ path: url.pathname, method: 'POST', headers, body });
        const text = await res.body.text();
        if (res.statusCode === 200) tokens[i] = (JSON.parse(text) as { refresh_token: string }).refresh_token;
        else failure = `HTTP ${res.statusCode}: ${text.slice(0, 200)}`;
      } catch (err) {
        failure = (err as Error).message;
      }
      if (state.measuring && !state.stopped) latencies.push(performance.now() - started);
      if (failure) {
        // A failure in the warm-up counts too: its chain has stopped, so the window measures fewer.
        if (!state.stopped) errors++;
        sample ??= failure;
        return;
      }
    }
  };
  const chains = spec.refreshTokens.map((_, i) => chain(i));
  await timeWindow(spec, () => send({ type: 'window' }), state);
  await Promise.all(chains);
  await pool.close();
  return resultOf(latencies, latencies.length, errors, spec.seconds, sample);
}

/**
 * The baseline of the webhook rows: what posting the same signed bodies costs with nothing around
 * it (no queue, no lease, no record). Each loop has its receiver URL and one connection, as each
 * endpoint's lane does; a body is built and signed per request, as the sender does, and its
 * answer read. Anything but 200 counts as wrong.
 */
async function postWebhooks(spec: WebhookPostLoad & Timing): Promise<LoadResult> {
  const state = { measuring: false, stopped: false };
  const latencies: number[] = [];
  let [errors, sample] = [0, undefined as string | undefined];
  const loop = async (target: string) => {
    const url = new URL(target);
    const pool = new Pool(url.origin, { connections: 1, pipelining: 1 });
    while (!state.stopped) {
      const started = performance.now();
      const [id, timestamp] = [`msg_${randomUUID()}`, new Date()];
      const body = JSON.stringify({ id, type: spec.type, timestamp: timestamp.toISOString(), data: spec.data });
      const headers = {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
        'webhook-signature': new Webhook(spec.secret).sign(id, timestamp, body),
      };
      let failure: string | undefined;
      try {
        const res = await pool.request({ path: url.pathname, method: 'POST', headers, body });
        await res.body.text();
        if (res.statusCode !== 200) failure = `HTTP ${res.statusCode}`;
      } catch (err) {
        failure = (err as Error).message;
      }
      if (!state.measuring || state.stopped) continue;
      latencies.push(performance.now() - started);
      if (failure) [errors, sample] = [errors + 1, sample ?? failure];
    }
    await pool.close();
  };
  const loops = spec.urls.map(loop);
  await timeWindow(spec, () => send({ type: 'window' }), state);
  await Promise.all(loops);
  return resultOf(latencies, latencies.length, errors, spec.seconds, sample);
}

/**
 * Orders at a fixed pace (open loop): a burst is sent when due, whether or not the last one was
 * answered, and each order is timed from when it was due, so a slow answer cannot hide the wait
 * of those behind it. The bursts due inside the window are the ones measured. Anything but 201
 * counts as wrong.
 */
async function pacedOrders(spec: PacedOrderLoad & Timing): Promise<LoadResult> {
  const url = new URL(spec.url);
  const pool = new Pool(url.origin, { connections: Math.max(4, spec.burst * 2), pipelining: 1 });
  const next = orderMaker(spec);
  const state = { measuring: false, stopped: false };
  const latencies: number[] = [];
  let [errors, sample] = [0, undefined as string | undefined];
  const order = async (due: number, measured: boolean) => {
    let failure: string | undefined;
    try {
      const res = await pool.request({ path: url.pathname, method: 'POST', ...next() });
      const text = await res.body.text();
      if (res.statusCode !== 201) failure = `HTTP ${res.statusCode}: ${text.slice(0, 200)}`;
    } catch (err) {
      failure = (err as Error).message;
    }
    if (!measured) return;
    latencies.push(performance.now() - due);
    if (failure) [errors, sample] = [errors + 1, sample ?? failure];
  };
  const pace = async () => {
    const sent: Array<Promise<void>> = [];
    let due = performance.now();
    while (!state.stopped) {
      const burst = Array.from({ length: spec.burst }, () => order(due, state.measuring));
      if (spec.everyMs === 0) {
        await Promise.all(burst);
        due = performance.now();
        continue;
      }
      sent.push(...burst);
      due += spec.everyMs;
      await sleep(Math.max(0, due - performance.now()));
    }
    await Promise.all(sent);
  };
  const paced = pace();
  await timeWindow(spec, () => send({ type: 'window' }), state);
  await paced;
  await pool.close();
  return resultOf(latencies, latencies.length, errors, spec.seconds, sample);
}
