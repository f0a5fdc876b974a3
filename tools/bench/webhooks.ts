/**
 * The webhooks path (all-in-one): how fast auth's sender empties a queue of deliveries into a
 * bare receiver, beside plain posting of the same signed bodies at the same concurrency (the cost
 * of its queue, leases and records); then order placement with the app's endpoints registered
 * beside without (each order then fans out to a delivery per endpoint in auth's consumer, which
 * the sender posts meanwhile).
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { createClient } from 'redis';
import {
  createUser,
  fund,
  grantTokens,
  http,
  lastPrice,
  listInstrument,
  provisionApp,
  type Urls,
  type VendorApp,
  type WorldUser,
} from '@trading/testing';
import { limitBuy } from './load';
import { Bench, progress, SECONDS, type Drained } from './measure';
import { basicAuth } from './oidc-peer/grants';
import { dbUrl, type PlatformOptions } from './platform';
import type { Watched } from './proc';
import { freePort, Group } from './processes';
import { WEBHOOK_ENDPOINTS, type RowName } from './report';

type Endpoint = { id: string; secret: string; url: string };
/** The recorded event every queued delivery carries a copy of (a real order's). */
type Template = { id: string; type: string; data: Record<string, unknown> };

/** Deliveries per endpoint drained before each measured drain: connections opened, code warm, the rate to size the drain by. */
const WARMUP_PER_ENDPOINT = 200;
/** The measured drain is the warm-up's rate times BENCH_SECONDS, within these bounds. */
const [MIN_DRAIN, MAX_DRAIN] = [500, 100_000];
/** How often the queue's ends are looked at (by primary key: a few rows, cheap beside the sender's own queries). */
const POLL_MS = 20;
/** A drain that moves nothing for this long has stopped (a sender down, an endpoint refused). */
const STALL_MS = 60_000;

/** An endpoint registered by the app itself (POST {base_url}/webhooks/endpoints, HTTP Basic), every event type. */
async function register(urls: Urls, app: VendorApp, url: string): Promise<Endpoint> {
  const res = await http('POST', `${urls.api}/webhooks/endpoints`, {
    body: { url },
    headers: { authorization: basicAuth(app.clientId, app.clientSecret) },
  });
  if (res.status !== 201) throw new Error(`POST /v1/webhooks/endpoints answered ${res.status}: ${JSON.stringify(res.body)}`);
  return { id: res.body.id, secret: res.body.secret, url };
}

/** Polls `check` every POLL_MS until it answers a value; fails after `timeoutMs` of `undefined`. */
async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = STALL_MS): Promise<T> {
  for (const end = Date.now() + timeoutMs; Date.now() < end; await sleep(POLL_MS)) {
    const value = await check();
    if (value !== undefined) return value;
  }
  throw new Error(`webhooks: no ${what} after ${timeoutMs / 1000} s`);
}

/** The order.accepted event auth recorded of order `orderId`: what every queued delivery carries. */
function templateOf(db: Client, orderId: string): Promise<Template> {
  return until(`order.accepted event recorded of order ${orderId}`, async () => {
    const { rows } = await db.query(
      `SELECT id, type, data FROM webhook_events WHERE type = 'order.accepted' AND data->'order'->>'id' = $1 LIMIT 1`,
      [orderId],
    );
    return rows[0] as Template | undefined;
  });
}

/**
 * Queues `count` deliveries in one statement, as auth's consumer would for count ÷ endpoints
 * copies of the template's event (each fanned out to every endpoint, as an order's is), then
 * times the sender: from the first delivery recorded to each endpoint's last one recorded (a
 * lane sends in queue order). What was delivered before the first was seen is left out.
 */
async function drain(
  db: Client,
  template: Template,
  endpoints: Endpoint[],
  count: number,
  onWindow: () => void = () => undefined,
): Promise<Drained> {
  const ids = endpoints.map((e) => e.id);
  const { rows: lanes } = await db.query(
    `WITH ev AS (
       INSERT INTO webhook_events (id, type, user_id, account_id, dedupe_key, data, occurred_at)
       SELECT gen_random_uuid(), t.type, t.user_id, t.account_id, 'bench:' || $2 || ':' || n, t.data, now()
         FROM webhook_events t, generate_series(1, $3::int) n WHERE t.id = $1
       RETURNING id, seq
     ), queued AS (
       INSERT INTO webhook_deliveries (event_id, endpoint_id) SELECT ev.id, e FROM ev, unnest($4::uuid[]) e ORDER BY ev.seq, e RETURNING seq, endpoint_id
     )
     SELECT min(seq)::text AS first, max(seq)::text AS last, count(*)::int AS n FROM queued GROUP BY endpoint_id`,
    [template.id, randomBytes(4).toString('hex'), Math.ceil(count / endpoints.length), ids],
  );
  const [firsts, lasts] = [lanes.map((l) => l.first as string), lanes.map((l) => l.last as string)];
  const [lo, hi, queued] = [firsts.reduce(min), lasts.reduce(max), lanes.reduce((sum, l) => sum + (l.n as number), 0)];
  const recorded = async (seqs: string[]) =>
    (await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE seq = ANY($1::bigint[]) AND status <> 'PENDING'`, [seqs]))
      .rows[0].n as number;
  const delivered = async () =>
    (
      await db.query(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE seq BETWEEN $1 AND $2 AND endpoint_id = ANY($3::uuid[]) AND status = 'DELIVERED'`,
        [lo, hi, ids],
      )
    ).rows[0].n as number;
  await until('delivery sent', async () => ((await recorded(firsts)) > 0 ? true : undefined));
  const started = performance.now();
  onWindow();
  const before = await delivered();
  await until('end of the queue', async () => ((await recorded(lasts)) === lasts.length ? true : undefined), 10 * STALL_MS);
  const seconds = (performance.now() - started) / 1000;
  const after = await delivered();
  const errors = queued - after;
  return { total: queued - before, errors, seconds, ...(errors ? { sample: `${errors} of ${queued} deliveries not delivered` } : {}) };
}
const min = (a: string, b: string) => (BigInt(a) < BigInt(b) ? a : b);
const max = (a: string, b: string) => (BigInt(a) > BigInt(b) ? a : b);

/**
 * The sender draining a queue for `endpoints` (a warm-up drain first, whose rate sizes the
 * measured one to about BENCH_SECONDS), then plain posting at the same concurrency.
 */
async function sendingRows(
  bench: Bench,
  db: Client,
  template: Template,
  endpoints: Endpoint[],
  rows: [RowName, RowName],
  watched: Watched[],
) {
  progress(`webhooks: warming the sender with ${WARMUP_PER_ENDPOINT * endpoints.length} deliveries to ${endpoints.length} endpoint(s)…`);
  const warm = await drain(db, template, endpoints, WARMUP_PER_ENDPOINT * endpoints.length);
  const count = Math.min(MAX_DRAIN, Math.max(MIN_DRAIN, Math.round((warm.total / warm.seconds) * SECONDS)));
  await bench.drained(rows[0], watched, (onWindow) => drain(db, template, endpoints, count, onWindow));
  const urls = endpoints.map((e) => e.url);
  const posts = { kind: 'webhook-posts' as const, urls, secret: endpoints[0]!.secret, type: template.type, data: template.data };
  await bench.measure(
    rows[1],
    posts,
    watched.filter((w) => w.name === 'receiver'),
  );
}

/** Resting limit buys of `user`'s (as the order rows place them), and `place`: one such order placed (a preflight), answering its id. */
async function orderLoad(urls: Urls, user: WorldUser, symbol: string) {
  const limitPrice = (Math.floor((await lastPrice(urls, user, symbol)) * 60) / 100).toFixed(2);
  const url = `${urls.api}/oms/order`;
  const headers = { authorization: `Bearer ${user.session}`, 'content-type': 'application/json' };
  const place = async () => {
    const probe = await fetch(url, { method: 'POST', headers, body: limitBuy(user.accounts[0]!, symbol, limitPrice) });
    const placed = (await probe.json()) as { id?: string };
    if (probe.status !== 201 || !placed.id)
      throw new Error(`POST /v1/oms/order: preflight answered ${probe.status}: ${JSON.stringify(placed)}`);
    return placed.id;
  };
  const traders = [{ token: user.session, accounts: user.accounts }];
  return { place, load: { kind: 'orders' as const, url, symbol, limitPrice, traders } };
}

const local = (port: number) => `http://127.0.0.1:${port}`;

/**
 * Stream entries auth's webhook consumer has not read yet (Redis's lag figure) and read but not
 * yet recorded (pending); 1 at least while it has not read up to the stream's last entry.
 */
async function consumerLag(options: PlatformOptions): Promise<number> {
  const redis = createClient({ url: options.redisUrl });
  await redis.connect();
  try {
    const stream = `${options.prefix}oms:events`;
    const [group, info] = [(await redis.xInfoGroups(stream)).find((g) => g.name === 'webhooks'), await redis.xInfoStream(stream)];
    if (!group) return 0;
    const unread = group['last-delivered-id'] === info['last-generated-id'] ? 0 : Math.max(1, Number(group.lag ?? 1));
    return unread + Number(group.pending);
  } finally {
    await redis.close();
  }
}

/** Until auth's consumer has recorded every order event so far: one recorded after endpoints are registered would be fanned out to them. */
const caughtUp = (options: PlatformOptions) =>
  until("catching up of auth's webhook consumer", async () => ((await consumerLag(options)) === 0 ? true : undefined), 10 * STALL_MS);

/**
 * The webhooks rows in a running all-in-one: a user who granted a vendor app read:orders, a bare
 * receiver with a port per endpoint, order placement with no endpoint, the sender to one endpoint
 * and to WEBHOOK_ENDPOINTS, then order placement with those endpoints registered.
 */
export async function webhooks(
  bench: Bench,
  options: PlatformOptions,
  platform: { urls: Urls; adminToken: string; processes(): Watched[] },
) {
  const { urls, adminToken, processes } = platform;
  progress('webhooks: a user granting a vendor app read:orders, funded, and a bare receiver…');
  const [user, symbol, app] = [
    await createUser(urls, adminToken, 'webhooks'),
    await listInstrument(urls, adminToken, '100.00'),
    await provisionApp(urls, adminToken, ['read:accounts', 'read:orders']),
  ];
  await fund(urls, user, '10000000.00');
  await grantTokens(urls, app, user, 'read:orders');
  const ports: number[] = [];
  for (let i = 0; i < WEBHOOK_ENDPOINTS; i++) ports.push(await freePort());
  const db = new Client({ connectionString: dbUrl(options, 'auth') });
  await db.connect();
  try {
    await Group.run(options.logDir, async (group) => {
      const server = await group.serve(
        'webhook-receiver',
        'tools/bench/bare-server.ts',
        { PORTS: ports.join(',') },
        `${local(ports[0]!)}/`,
      );
      const watched = () => [...processes(), { name: 'receiver', pid: server.pid }];
      const { place, load } = await orderLoad(urls, user, symbol);
      await place();
      await bench.measure('webhooks-orders', load, watched);
      await caughtUp(options);
      // Auth keeps an event only when an endpoint should hear of it: the queued copies' is placed once one is registered.
      const endpoints = [await register(urls, app, `${local(ports[0]!)}/hooks`)];
      const template = await templateOf(db, await place());
      await sendingRows(bench, db, template, endpoints, ['webhooks', 'webhook-posts'], watched());
      for (const port of ports.slice(1)) endpoints.push(await register(urls, app, `${local(port)}/hooks`));
      await sendingRows(bench, db, template, endpoints, ['webhooks-fanout', 'webhook-posts-fanout'], watched());
      const [{ seq }] = (await db.query(`SELECT coalesce(max(seq), 0)::text AS seq FROM webhook_deliveries`)).rows;
      await bench.measure('webhooks-orders-fanout', load, watched);
      await noteBacklog(bench, db, options, seq as string);
    });
  } finally {
    await db.end();
  }
}

/**
 * How far auth kept up with the fan-out: as the window closed, the stream entries its consumer had
 * yet to record and the deliveries sent since `afterSeq`; then how long recording the rest took
 * with no more orders coming, and how many deliveries the row's orders made in all.
 */
async function noteBacklog(bench: Bench, db: Client, options: PlatformOptions, afterSeq: string) {
  const count = async (where: string) =>
    (await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE seq > $1 ${where}`, [afterSeq])).rows[0].n as number;
  const [lag, sent] = [await consumerLag(options), await count(`AND status = 'DELIVERED'`)];
  const started = performance.now();
  await caughtUp(options);
  const [seconds, queued] = [(performance.now() - started) / 1000, await count('')];
  const n = (v: number) => v.toLocaleString('en-US');
  const row = bench.rows.find((r) => r.name === 'webhooks-orders-fanout');
  if (row)
    row.path +=
      `; as the window closed auth had ${n(lag)} stream entries yet to record (done ${seconds.toFixed(1)} s later) ` +
      `and had sent ${n(sent)} of the ${n(queued)} deliveries these orders made`;
}
