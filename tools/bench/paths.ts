/** Each measured path: its targets started, its world made (users, grants, funded accounts), its loads measured. */
import { randomBytes } from 'node:crypto';
import { withDatabaseName } from '@trading/db';
import { createUser, fund, http, lastPrice, listInstrument, provisionApp, refreshTokens, TEST_POSTGRES_URL } from '@trading/testing';
import { TEST_REDIS_URL, type Urls, type VendorApp, type WorldUser } from '@trading/testing';
import { newDpopKey, proofSigner, type DpopKey } from './dpop';
import { limitBuy, ORDER_BURST, ORDER_TRADERS, ROTATION_CHAINS } from './load';
import { Bench, progress, SECONDS, type Watching } from './measure';
import { peerRefreshTokens, type PeerClient } from './oidc-peer/grants';
import { runPgbench } from './pgbench';
import { buildBundles, dbUrl, startAllInOne, startServiceMode, type PlatformOptions } from './platform';
import { startIngress } from './ingress';
import { childrenOf, readRssBytes, watchPeakRss } from './proc';
import { deleteKeys, freePort, Group } from './processes';
import { labelOf, type Memory, type PathName, type RowName } from './report';
import { webhooks } from './webhooks';
import { loadWeekOfTicks, middleDayOfTheWeek } from './week-of-ticks';

/** The operation the facade sends for GET /v1/accounts: every chain answers the same query. */
const QUERY = 'query Accounts { accounts { id number type status baseCurrency createdAt } }';
const graphqlPost = (headers: Record<string, string> = {}) => ({
  method: 'POST' as const,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify({ operationName: 'Accounts', query: QUERY }),
});
const bearerGet = (token: string) => ({ method: 'GET' as const, headers: { authorization: `Bearer ${token}` } });
const local = (port: number) => `http://127.0.0.1:${port}`;
const sessions = (users: WorldUser[]) => users.map((u) => ({ token: u.session, accounts: u.accounts }));

export async function bare(bench: Bench, logDir: string) {
  await Group.run(logDir, async (group) => {
    const port = await freePort();
    const server = await group.serve('bare', 'tools/bench/bare-server.ts', { PORT: String(port) }, `${local(port)}/`);
    await bench.fixed('bare', `${local(port)}/`, { method: 'GET', headers: {} }, [{ name: 'server', pid: server.pid }]);
  });
}

export async function stockChain(bench: Bench, logDir: string) {
  await Group.run(logDir, async (group) => {
    const [subgraphPort, gatewayPort, init] = [await freePort(), await freePort(), graphqlPost()];
    const [subgraphUrl, url] = [`${local(subgraphPort)}/`, `${local(gatewayPort)}/`];
    const env = (port: number, more = {}) => ({ PORT: String(port), NODE_ENV: 'production', ...more });
    const subgraph = await group.serve('stock-subgraph', 'tools/bench/stock/subgraph.ts', env(subgraphPort), subgraphUrl, { init });
    const gatewayEnv = env(gatewayPort, { SUBGRAPH_URL: subgraphUrl });
    const gateway = await group.serve('stock-gateway', 'tools/bench/stock/gateway.ts', gatewayEnv, url, { init });
    await bench.fixed('stock', url, init, [
      { name: 'gateway', pid: gateway.pid },
      { name: 'subgraph', pid: subgraph.pid },
    ]);
  });
}

/**
 * The peer: node-oidc-provider in a process of its own, grants made through its authorization-code
 * + PKCE flow over HTTP, then the same rotation load as ours; then in two processes of Node's
 * cluster (as `npm start` runs ours), and behind the leanest proxy hop Node offers, what a hop alone
 * costs on this machine (the all-in-one still hands `{base_url}/oauth/*` from its facade to auth).
 * Behind the deployment's HAProxy it is measured with service mode, beside ours.
 */
export async function oidcPeer(bench: Bench, id: string, logDir: string) {
  const [proxyPort, clusterPort] = [await freePort(), await freePort()];
  await withPeer(bench, `bench_${id}_oidc:`, logDir, async ({ client, serve, rotate, clientEnv }) => {
    const peer = { name: 'oidc-provider', pid: (await serve('oidc-peer', 'server.mjs', clientEnv, client.issuer)).pid };
    await rotate('oidc-peer', client.issuer, [peer]);
    // The peer as `npm start` runs ours: two processes of Node's cluster on one port.
    const clustered = await serve('oidc-peer-cluster', 'cluster.mjs', { ...clientEnv, PORT: String(clusterPort) }, local(clusterPort));
    const processes = () => [
      { name: 'oidc-provider primary', pid: clustered.pid },
      ...childrenOf(clustered.pid).map((pid, i) => ({ name: `oidc-provider ${i + 1}`, pid })),
    ];
    await rotate('oidc-peer-cluster', local(clusterPort), processes, { ...client, issuer: local(clusterPort) });
    const proxy = await serve('oidc-peer-proxy', 'proxy.mjs', { PORT: String(proxyPort), TARGET: client.issuer }, local(proxyPort));
    await rotate('oidc-peer-proxied', local(proxyPort), [{ name: 'proxy', pid: proxy.pid }, peer]);
  });
}

const PEER_METADATA = '/.well-known/openid-configuration';

/**
 * node-oidc-provider's world for `use`: its client (issuer on a free port), the environment its
 * launchers read, `serve` (one of tools/bench/oidc-peer's launchers, ready once its metadata
 * answers) and `rotate` (grants made at `at`, the peer that will rotate them, then the load sent to
 * `base`: that peer, or a proxy in front of it). Its storage lives in Redis under `prefix`,
 * deleted afterwards.
 */
async function withPeer(
  bench: Bench,
  prefix: string,
  logDir: string,
  use: (peer: {
    client: PeerClient;
    clientEnv: Record<string, string>;
    serve: (name: string, file: string, env: Record<string, string>, base: string) => ReturnType<Group['serve']>;
    rotate: (name: RowName, base: string, watched: Watching, at?: PeerClient) => Promise<void>;
  }) => Promise<void>,
) {
  const port = await freePort();
  const secret = randomBytes(24).toString('hex');
  const redirectUri = 'https://vendor.example/callback';
  const client: PeerClient = { issuer: local(port), clientId: 'bench-vendor', clientSecret: secret, redirectUri };
  const env = { PORT: String(port), NODE_ENV: 'production', REDIS_URL: TEST_REDIS_URL, OIDC_REDIS_PREFIX: prefix };
  const clientEnv = { ...env, OIDC_CLIENT_ID: client.clientId, OIDC_CLIENT_SECRET: secret, OIDC_REDIRECT_URI: redirectUri };
  try {
    await Group.run(logDir, async (group) => {
      const serve = (name: string, file: string, env: Record<string, string>, base: string) =>
        group.serve(name, `tools/bench/oidc-peer/${file}`, env, `${base}${PEER_METADATA}`);
      const rotate = async (name: RowName, base: string, watched: Watching, at: PeerClient = client) => {
        progress(`making ${ROTATION_CHAINS} grants at ${at.issuer} (node-oidc-provider, authorization code + PKCE)…`);
        await bench.rotation(name, `${base}/token`, at, await peerRefreshTokens(at, ROTATION_CHAINS), watched);
      };
      await use({ client, clientEnv, serve, rotate });
    });
  } finally {
    await deleteKeys(TEST_REDIS_URL, `${prefix}*`);
  }
}

/**
 * The all-in-one (`npm start`): its REST read, with its resident size after start and at the peak
 * of the load, and rotation (`all-in-one`); the bars read (`bars`); order placement (`all-in-one-orders`);
 * webhook deliveries and order placement with webhook endpoints (`webhooks`).
 */
export async function allInOne(bench: Bench, options: PlatformOptions, only: Set<PathName>): Promise<Memory | undefined> {
  progress('starting the all-in-one (npm start)…');
  const platform = await startAllInOne(options);
  const { urls, adminToken, processes } = platform;
  try {
    const user = await createUser(urls, adminToken);
    let memory: Memory | undefined;
    if (only.has('all-in-one')) {
      const settled = processes().map((p) => ({ name: p.name, bytes: readRssBytes(p.pid) }));
      const peak = watchPeakRss(processes);
      const path = labelOf('all-in-one').replace('<n>', String(settled.length));
      await bench.fixed('all-in-one', `${urls.api}/accounts`, bearerGet(user.session), processes, path);
      memory = { afterStart: settled.reduce((sum, p) => sum + p.bytes, 0), peakUnderLoad: peak.stop(), processes: settled };
      // Rotation where a vendor calls it: the metadata's token_endpoint, {base_url}/oauth/token.
      await rotation(bench, 'all-in-one-rotation', `${urls.api}/oauth/token`, urls, await provisionApp(urls, adminToken), user, processes);
    }
    if (only.has('bars')) {
      const symbol = await listInstrument(urls, adminToken, '150.00');
      progress(`writing a week of ${symbol} ticks into the OMS's database…`);
      await loadWeekOfTicks(dbUrl(options, 'oms'), symbol);
      // A day from the middle of the week, both ends given: the same page every time (the default ends move with the clock).
      const url = `${urls.api}/market/bars/${symbol}?timeframe=1Min&limit=100&${middleDayOfTheWeek()}`;
      await bench.fixed('bars', url, bearerGet(user.session), processes);
    }
    // After the read: its memory figures are of the platform as started, before a book of orders.
    if (only.has('all-in-one-orders')) await orders(bench, 'all-in-one', urls, await tradingWorld(urls, adminToken, user), processes);
    if (only.has('webhooks')) await webhooks(bench, options, platform);
    return memory;
  } finally {
    await platform.stop();
  }
}

/** Service mode (six processes): the REST read (bearer, then DPoP-bound), the gateway alone, rotation, orders and market orders. */
export async function serviceMode(bench: Bench, options: PlatformOptions, only: Set<PathName>) {
  if (process.env['BENCH_SKIP_BUILD'] !== '1') {
    progress('building the six bundles (npx nx run-many -t build)…');
    await buildBundles(options.root);
  }
  progress('starting the six services…');
  const services = await startServiceMode(options);
  const { urls, adminToken, pids } = services;
  try {
    const user = await createUser(urls, adminToken);
    if (only.has('service-rest')) {
      const [url, watched] = [`${urls.api}/accounts`, pids('rest-facade', 'gateway', 'accounts')];
      await bench.fixed('service-rest', url, bearerGet(user.session), watched);
      // A fresh proof per request, checked at the facade.
      const key = newDpopKey();
      const token = await dpopPatSession(urls, adminToken, user.email, key);
      const headers = { authorization: `DPoP ${token}`, dpop: proofSigner(key)('GET', url, token) };
      await bench.fixed('service-rest-dpop', url, { method: 'GET', headers, dpop: { key, accessToken: token } }, watched);
    }
    const asUser = graphqlPost({ authorization: `Bearer ${user.session}` });
    if (only.has('gateway')) await bench.fixed('gateway', services.gatewayUrl, asUser, pids('gateway', 'accounts'));
    if (only.has('rotation')) {
      // Through the facade as vendors call it, then at auth's own listener.
      const app = await provisionApp(urls, adminToken);
      await rotation(bench, 'rotation-facade', `${urls.api}/oauth/token`, urls, app, user, pids('rest-facade', 'auth'));
      const authOrigin = urls.login.replace('localhost', '127.0.0.1');
      await rotation(bench, 'rotation', `${authOrigin}/oauth/token`, urls, app, user, pids('auth'));
      // Then as deployed: ours and the peer behind the same HAProxy, {base_url}/oauth/* routed straight to auth.
      await withPeer(bench, `${options.prefix}oidc:`, options.logDir, async ({ client, serve, rotate, clientEnv }) => {
        const peer = await serve('oidc-peer-ingress', 'server.mjs', clientEnv, client.issuer);
        const targets = { facade: urls.api, auth: authOrigin, peer: client.issuer };
        const ingress = await startIngress(options.logDir, targets, { api: '/openapi.json', peer: PEER_METADATA });
        try {
          const haproxy = { name: 'haproxy', pid: ingress.pid };
          // The facade is watched to show it idle: the token path no longer passes through it.
          const ours = [haproxy, ...pids('auth', 'rest-facade')];
          await rotation(bench, 'rotation-ingress', `${ingress.api}/oauth/token`, urls, app, user, ours);
          await rotate('oidc-peer-ingress', ingress.peer, [haproxy, { name: 'oidc-provider', pid: peer.pid }]);
        } finally {
          await ingress.stop();
        }
      });
    }
    if (!only.has('orders') && !only.has('market')) return;
    const world = await tradingWorld(urls, adminToken, user);
    const watched = pids('rest-facade', 'gateway', 'oms', 'banking', 'accounts');
    if (only.has('orders')) await orders(bench, 'service mode', urls, world, watched);
    // Banking's and accounts' databases, read by primary key to learn when a fill is applied.
    const databases = { banking: dbUrl(options, 'banking'), accounts: dbUrl(options, 'accounts') };
    const market = { kind: 'market' as const, api: urls.api, traders: sessions(world.traders.slice(1)), symbol: world.symbol, databases };
    if (only.has('market')) await bench.measure('market', market, watched);
  } finally {
    await services.stop();
  }
}

/** The database's own commit rate on the same server: what the money paths are measured against. */
export async function pgbench(bench: Bench, id: string) {
  progress(`pgbench -c 8 -j 2 -T ${SECONDS} on the same PostgreSQL server…`);
  const pg = await runPgbench(withDatabaseName(TEST_POSTGRES_URL, `bench_${id}_pgbench`), SECONDS);
  const path = `${labelOf('pgbench')}: ${pg.command}${pg.latencyMs === undefined ? '' : `, latency average ${pg.latencyMs} ms`}`;
  bench.rows.push({ name: 'pgbench', path, unit: 'tps', perSecond: pg.tps, total: pg.transactions ?? 0, errors: 0, cpu: [] });
}

/** One instrument, and 1 + ORDER_TRADERS funded users (`user` first): what the order and market paths trade with. */
async function tradingWorld(urls: Urls, adminToken: string, user: WorldUser) {
  progress(`listing an instrument and funding the accounts of 1 + ${ORDER_TRADERS} traders…`);
  const symbol = await listInstrument(urls, adminToken, '100.00');
  const traders = [user];
  for (let i = 0; i < ORDER_TRADERS; i++) traders.push(await createUser(urls, adminToken, 'trader'));
  for (const trader of traders) await fund(urls, trader, '10000000.00');
  return { symbol, traders };
}

/**
 * Limit buys 40% below the market (within the ±50% band): they rest, each taking a hold in banking.
 * First one user's two accounts (every order takes the same two accounts' locks: an account's
 * spends are serial by design), then a broker's order flow: the other users' accounts in turn.
 */
async function orders(bench: Bench, mode: 'service mode' | 'all-in-one', urls: Urls, world: World, watched: Watching) {
  const [user, ...others] = world.traders as [WorldUser, ...WorldUser[]];
  const limitPrice = (Math.floor((await lastPrice(urls, user, world.symbol)) * 60) / 100).toFixed(2);
  const url = `${urls.api}/oms/order`;
  const headers = { authorization: `Bearer ${user.session}`, 'content-type': 'application/json' };
  const probe = await fetch(url, { method: 'POST', headers, body: limitBuy(user.accounts[0]!, world.symbol, limitPrice) });
  if (probe.status !== 201) throw new Error(`POST /v1/oms/order: preflight answered ${probe.status}: ${await probe.text()}`);
  const load = { kind: 'orders' as const, url, symbol: world.symbol, limitPrice };
  const prefix = mode === 'all-in-one' ? 'all-in-one-' : '';
  await bench.measure(`${prefix}orders`, { ...load, traders: sessions([user]) }, watched);
  await bench.measure(`${prefix}orders-spread`, { ...load, traders: sessions(others) }, watched);
  // What a trader waits: one order at a time, then 50 arriving together each second (open loop), over the many users' accounts.
  const paced = { ...load, kind: 'orders-paced' as const, traders: sessions(others) };
  await bench.measure(`${prefix}orders-single`, { ...paced, burst: 1, everyMs: 0 }, watched);
  await bench.measure(`${prefix}orders-burst`, { ...paced, burst: ORDER_BURST, everyMs: 1000 }, watched);
}
type World = Awaited<ReturnType<typeof tradingWorld>>;

/** ROTATION_CHAINS grants of `user` to `app` (authorization code + PKCE), then their refresh-token chains at `url`. */
async function rotation(bench: Bench, name: RowName, url: string, urls: Urls, app: VendorApp, user: WorldUser, watched: Watching) {
  progress(`making ${ROTATION_CHAINS} grants (authorization code + PKCE)…`);
  await bench.rotation(name, url, app, await refreshTokens(urls, app, user, ROTATION_CHAINS), watched);
}

/** A READ_WRITE PAT for `email` (admin API), exchanged with a proof of `key`: the session token is bound to it. */
async function dpopPatSession(urls: Urls, adminToken: string, email: string, key: DpopKey): Promise<string> {
  const expires = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10);
  const body = { email, name: 'bench dpop', scope: 'READ_WRITE', expires };
  const pat = await http('POST', `${urls.admin}/admin/pats`, { token: adminToken, body });
  if (pat.status !== 201 && pat.status !== 200) throw new Error(`POST /admin/pats answered ${pat.status}`);
  const url = `${urls.api}/pat/login`;
  const login = await http('POST', url, { body: { token: pat.body.token }, headers: { dpop: proofSigner(key)('POST', url) } });
  if (login.status !== 200) throw new Error(`POST /v1/pat/login with a DPoP proof answered ${login.status}: ${JSON.stringify(login.body)}`);
  return login.body.token as string;
}
