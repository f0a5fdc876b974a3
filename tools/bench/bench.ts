/**
 * `npm run bench`: every path listed below, measured in one run on this machine, each target
 * started as a user or a deployment starts it (child processes; the bench imports no app):
 *
 *   bare          a bare Node HTTP server (the machine's ceiling)
 *   stock         stock @apollo/gateway → stock @apollo/subgraph, the same accounts query (stock/)
 *   all-in-one    `npm start`'s process tree, GET /v1/accounts with a PAT session; its memory
 *   service-rest  the six apps as separate processes, GET /v1/accounts (facade → gateway → accounts)
 *   gateway       the same operation straight at our gateway's public /graphql
 *   rotation      32 refresh-token chains at {base_url}/oauth/token (the facade) and at auth's own listener
 *   oidc-peer     the same rotation load at node-oidc-provider with a Redis adapter (oidc-peer/)
 *   orders        POST /v1/oms/order, beside pgbench's TPC-B-like run on the same server
 *   market        market buys followed until banking and accounts both applied the fill
 *
 * The all-in-one path also rotates 32 chains at its {base_url}/oauth/token.
 *
 * autocannon with 50 connections, in a process of its own; each target warmed for
 * BENCH_WARMUP_SECONDS (20) and then measured for BENCH_SECONDS (10), with every involved
 * process's CPU time read around the window. `--only a,b` runs some paths; `--head` measures the
 * last commit (a snapshot; `--commit <rev>` another) rather than the working tree;
 * BENCH_SKIP_BUILD=1 reuses dist/. Prints a Markdown table and the ratios, and writes tools/bench/results.json
 * (a full run) or the log folder's results.json (`--only`). Nothing asserts on time: the exit
 * status is 1 only when a target answers wrongly (its preflight, or > 1% of the window).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { withDatabaseName } from '@trading/db';
import { startAllInOne, type AllInOne } from './all-in-one';
import { newDpopKey, proofSigner, type DpopKey } from './dpop';
import { CONNECTIONS, LoadGenerator, MARKET_CONCURRENCY, ROTATION_CHAINS, type LoadSpec, type MarketLoad, type RotationLoad } from './load';
import { peerRefreshTokens, type PeerClient } from './oidc-peer/grants';
import { runPgbench } from './pgbench';
import { startPgWaits, type PgWaits } from './pg-waits';
import { startInstructionCount, type InstructionUse } from './instructions';
import { postgresServer, readRssBytes, startCpuWindow, watchPeakRss, type Watched } from './proc';
import { answers200, freePort, rateLimitsMeasured, ROOT, startProcess, startTsx, stopProcess, waitUntil, type Started } from './processes';
import { formatTable, parseOnly, PATHS, ratiosInWords, type Memory, type PathName, type Row } from './report';
import { buildBundles, startServiceMode, type ServiceMode } from './service-mode';
import { snapshotOfHead, workingTree, type Source } from './source';
import { loadWeekOfTicks, middleDayOfTheWeek } from './week-of-ticks';
import { deleteKeys } from './streams';
import {
  createUser,
  fund,
  http,
  lastPrice,
  listInstrument,
  provisionApp,
  refreshTokens,
  TEST_POSTGRES_URL,
  TEST_REDIS_URL,
  uniqueId,
  type Urls,
  type VendorApp,
  type WorldUser,
} from '@trading/testing';

const SECONDS = wholeNumber('BENCH_SECONDS', 10, 1);
const WARMUP_SECONDS = wholeNumber('BENCH_WARMUP_SECONDS', 20, 0);
/** Read at start, so a bad BENCH_RATE_LIMITS stops the run before anything is built. */
const RATE_LIMITS = rateLimitsMeasured();
/** Users placing orders side by side in the spread order load (besides the one user of the first). */
const ORDER_TRADERS = 24;
/** Above this share of wrong answers a figure measures the failure path, not the target. */
const MAX_ERROR_RATE = 0.01;
const POSTGRES_SERVER = TEST_POSTGRES_URL.replace(/\/[^/]*$/, '');
/** The operation the facade sends for GET /v1/accounts: every chain answers the same query. */
const ACCOUNTS_QUERY = 'query Accounts { accounts { id number type status baseCurrency createdAt } }';
const OPERATION = JSON.stringify({ operationName: 'Accounts', query: ACCOUNTS_QUERY });

function wholeNumber(name: string, fallback: number, min: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be a whole number ≥ ${min}, got "${value}"`);
  return n;
}

const progress = (message: string) => process.stderr.write(`${message}\n`);

class Bench {
  readonly rows: Row[] = [];
  readonly failures: string[] = [];
  /** `databases`: the prefix of this run's database names, whose backends a money path's window samples (pg-waits.ts). */
  constructor(
    private readonly generator: LoadGenerator,
    private readonly databases: string,
  ) {}

  /**
   * One request first, so a target that is down or refusing is not timed at its error path:
   * status 200 and no GraphQL "errors" (GraphQL errors come back as 200). Its answer is what
   * every request of the load must get.
   */
  async preflight(name: string, url: string, init: RequestInit): Promise<string> {
    const res = await fetch(url, init);
    const text = await res.text();
    if (res.status !== 200 || /"errors"\s*:/.test(text))
      throw new Error(`${name}: preflight answered ${res.status}: ${text.slice(0, 400)}`);
    return text;
  }

  async measure(
    row: Omit<Row, 'perSecond' | 'p50' | 'p99' | 'total' | 'errors' | 'cpu'>,
    load: LoadSpec,
    watched: () => Watched[],
    /**
     * `moneyPath`: what the database waited on, and the instructions each process retired;
     * `instructions`: the instructions alone (rotation, beside its peer).
     */
    options: { moneyPath?: boolean; instructions?: boolean } = {},
  ): Promise<Row> {
    progress(`measuring ${row.path}: ${load.warmupSeconds} s warm-up, ${load.seconds} s window…`);
    let window: ReturnType<typeof startCpuWindow> | undefined;
    let sampling: ReturnType<typeof startPgWaits> | undefined;
    let counting: ReturnType<typeof startInstructionCount> | undefined;
    // The database server too: on this machine it shares the cores with everything measured.
    const processes = () => [...watched(), { name: 'load', pid: this.generator.pid }, ...postgresServer()];
    let result: Awaited<ReturnType<LoadGenerator['run']>>;
    let waits: PgWaits | undefined;
    let instructions: InstructionUse | undefined;
    try {
      result = await this.generator.run(load, () => {
        window = startCpuWindow(processes());
        if (options.moneyPath) sampling = startPgWaits(POSTGRES_SERVER, this.databases);
        if (options.moneyPath || options.instructions) counting = startInstructionCount(processes());
      });
    } finally {
      // Its connection closed even when the load failed, or the bench would not exit; perf stopped likewise.
      waits = await (await sampling)?.finish();
      instructions = await counting?.finish();
    }
    const cpu = window ? window.finish() : [];
    const machine = window?.machine();
    const measured: Row = {
      ...row,
      perSecond: result.perSecond,
      p50: result.p50,
      p99: result.p99,
      total: result.total,
      errors: result.errors,
      cpu,
      ...(machine ? { machine } : {}),
      ...(waits ? { waits } : {}),
      ...(instructions ? { instructions } : {}),
    };
    this.rows.push(measured);
    if (result.errors > result.total * MAX_ERROR_RATE)
      this.failures.push(
        `${row.path}: ${result.errors} of ${result.total} answers wrong (> ${MAX_ERROR_RATE * 100}%), e.g. ${result.sample}`,
      );
    return measured;
  }

  async fixed(
    row: Pick<Row, 'name' | 'path'>,
    url: string,
    init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
    watched: () => Watched[],
  ) {
    const expectBody = await this.preflight(row.path, url, init);
    return this.measure(
      { ...row, unit: 'req/s' },
      { kind: 'fixed', url, ...init, expectBody, warmupSeconds: WARMUP_SECONDS, seconds: SECONDS },
      watched,
    );
  }
}

const graphqlPost = (headers: Record<string, string> = {}) => ({
  method: 'POST' as const,
  headers: { 'content-type': 'application/json', ...headers },
  body: OPERATION,
});

async function bare(bench: Bench, logDir: string) {
  const port = await freePort();
  const server = startTsx('bare', 'tools/bench/bare-server.ts', { PORT: String(port) }, logDir);
  try {
    const url = `http://127.0.0.1:${port}/`;
    await waitUntil(server, 'an answer', () => answers200(url));
    await bench.fixed({ name: 'bare', path: 'bare Node HTTP server (ceiling)' }, url, { method: 'GET', headers: {} }, () => [
      { name: 'server', pid: server.pid },
    ]);
  } finally {
    await stopProcess(server);
  }
}

async function stockChain(bench: Bench, logDir: string) {
  const [subgraphPort, gatewayPort] = [await freePort(), await freePort()];
  const started: Started[] = [];
  try {
    const subgraph = startTsx(
      'stock-subgraph',
      'tools/bench/stock/subgraph.ts',
      { PORT: String(subgraphPort), NODE_ENV: 'production' },
      logDir,
    );
    started.push(subgraph);
    const subgraphUrl = `http://127.0.0.1:${subgraphPort}/`;
    await waitUntil(subgraph, 'an answer', () => answers200(subgraphUrl, graphqlPost()));
    const gateway = startTsx(
      'stock-gateway',
      'tools/bench/stock/gateway.ts',
      { PORT: String(gatewayPort), SUBGRAPH_URL: subgraphUrl, NODE_ENV: 'production' },
      logDir,
    );
    started.push(gateway);
    const url = `http://127.0.0.1:${gatewayPort}/`;
    await waitUntil(gateway, 'an answer', () => answers200(url, graphqlPost()));
    await bench.fixed(
      { name: 'stock', path: 'stock @apollo/gateway → stock @apollo/subgraph (no auth, no database)' },
      url,
      graphqlPost(),
      () => [
        { name: 'gateway', pid: gateway.pid },
        { name: 'subgraph', pid: subgraph.pid },
      ],
    );
  } finally {
    await Promise.all(started.map((p) => stopProcess(p)));
  }
}

/**
 * The all-in-one (`npm start`): its REST read, with its resident size after start and at the peak
 * of the load, and rotation (`all-in-one`); order placement (`all-in-one-orders`).
 */
async function allInOne(bench: Bench, source: Source, only: Set<PathName>, id: string, logDir: string): Promise<Memory | undefined> {
  progress('starting the all-in-one (npm start)…');
  const platform = await startAllInOne({
    root: source.root,
    postgresServer: POSTGRES_SERVER,
    redisUrl: TEST_REDIS_URL,
    prefix: `bench_${id}_`,
    logDir,
  });
  try {
    const user = await createUser(platform.urls, platform.adminToken);
    const memory = only.has('all-in-one') ? await allInOneReadAndRotation(bench, platform, user) : undefined;
    if (only.has('bars')) {
      // A page of bars over a week of ticks reads its own 100 bars: beside the REST read of the same run.
      const symbol = await listInstrument(platform.urls, platform.adminToken, '150.00');
      progress(`writing a week of ${symbol} ticks into the OMS's database…`);
      await loadWeekOfTicks(withDatabaseName(`${POSTGRES_SERVER}/postgres`, `bench_${id}_oms`), symbol);
      await bench.fixed(
        { name: 'bars', path: `GET /v1/market/bars/{symbol}?timeframe=1Min&limit=100 over 7 days of ticks, all-in-one` },
        // A day from the middle of the week, both ends given: the same page every time (the default
        // start and end move with the clock, and the cursor carries the end).
        `${platform.urls.api}/market/bars/${symbol}?timeframe=1Min&limit=100&${middleDayOfTheWeek()}`,
        { method: 'GET', headers: { authorization: `Bearer ${user.session}` } },
        platform.processes,
      );
    }
    // After the read: its memory figures are of the platform as started, before a book of orders.
    if (only.has('all-in-one-orders')) {
      const { symbol, traders } = await tradingWorld(platform.urls, platform.adminToken, user);
      await orders(bench, 'all-in-one', platform.urls, user, traders, symbol, platform.processes);
    }
    return memory;
  } finally {
    await platform.stop();
  }
}

/** The all-in-one's REST read (with its resident size after start and at the peak of the load), then rotation at its `{base_url}`. */
async function allInOneReadAndRotation(bench: Bench, platform: AllInOne, user: WorldUser): Promise<Memory> {
  const settled = platform.processes();
  const processes = settled.map((p) => ({ name: p.name, bytes: readRssBytes(p.pid) }));
  const peak = watchPeakRss(platform.processes);
  await bench.fixed(
    { name: 'all-in-one', path: `ours, all-in-one (${settled.length} processes), GET /v1/accounts, PAT session` },
    `${platform.urls.api}/accounts`,
    { method: 'GET', headers: { authorization: `Bearer ${user.session}` } },
    platform.processes,
  );
  const memory = { afterStart: processes.reduce((sum, p) => sum + p.bytes, 0), peakUnderLoad: peak.stop(), processes };
  // Rotation where a vendor calls it: the metadata's token_endpoint, {base_url}/oauth/token.
  const app = await provisionApp(platform.urls, platform.adminToken);
  await rotation(
    bench,
    {
      name: 'all-in-one-rotation',
      path: `refresh-token rotation, ${ROTATION_CHAINS} chains, {base_url}/oauth/token (all-in-one)`,
    },
    `${platform.urls.api}/oauth/token`,
    app,
    await grants(platform.urls, app, user),
    platform.processes,
  );
  return memory;
}

async function serviceMode(bench: Bench, source: Source, only: Set<PathName>, id: string, logDir: string) {
  if (process.env['BENCH_SKIP_BUILD'] !== '1') {
    progress('building the six bundles (npx nx run-many -t build)…');
    await buildBundles(source.root);
  }
  progress('starting the six services…');
  const prefix = `bench_${id}_svc_`;
  const services = await startServiceMode({
    root: source.root,
    postgresServer: POSTGRES_SERVER,
    redisUrl: TEST_REDIS_URL,
    prefix,
    logDir,
  });
  try {
    const user = await createUser(services.urls, services.adminToken);
    if (only.has('service-rest')) await serviceRest(bench, services, user);
    if (only.has('gateway'))
      await bench.fixed(
        { name: 'gateway', path: 'ours, service mode, the same query straight at our gateway' },
        services.gatewayUrl,
        graphqlPost({ authorization: `Bearer ${user.session}` }),
        () => [services.pidOf('gateway'), services.pidOf('accounts')],
      );
    if (only.has('rotation')) await serviceRotation(bench, services, user);
    if (only.has('orders') || only.has('market')) await serviceOrders(bench, services, user, only, prefix);
  } finally {
    await services.stop();
  }
}

/** GET /v1/accounts through the facade in service mode: with a bearer session, then with a DPoP-bound one. */
async function serviceRest(bench: Bench, services: ServiceMode, user: WorldUser) {
  const { urls } = services;
  const watched = () => [services.pidOf('rest-facade'), services.pidOf('gateway'), services.pidOf('accounts')];
  await bench.fixed(
    { name: 'service-rest', path: 'ours, service mode (six processes), GET /v1/accounts, PAT session' },
    `${urls.api}/accounts`,
    { method: 'GET', headers: { authorization: `Bearer ${user.session}` } },
    watched,
  );
  // The same read with a DPoP-bound session: a fresh proof per request, checked at the facade.
  const key = newDpopKey();
  const token = await dpopPatSession(urls, services.adminToken, user.email, key);
  const url = `${urls.api}/accounts`;
  const expectBody = await bench.preflight('service-rest-dpop', url, {
    method: 'GET',
    headers: { authorization: `DPoP ${token}`, dpop: proofSigner(key)('GET', url, token) },
  });
  await bench.measure(
    {
      name: 'service-rest-dpop',
      path: 'ours, service mode, GET /v1/accounts, PAT session bound to a DPoP key (a proof per request)',
      unit: 'req/s',
    },
    {
      kind: 'fixed',
      url,
      method: 'GET',
      headers: {},
      expectBody,
      dpop: { key, accessToken: token },
      warmupSeconds: WARMUP_SECONDS,
      seconds: SECONDS,
    },
    watched,
  );
}

/** Refresh-token rotation in service mode: through the facade as vendors call it, then at auth's own listener. */
async function serviceRotation(bench: Bench, services: ServiceMode, user: WorldUser) {
  const { urls } = services;
  const app = await provisionApp(urls, services.adminToken);
  await rotation(
    bench,
    {
      name: 'rotation-facade',
      path: `refresh-token rotation, ${ROTATION_CHAINS} chains, {base_url}/oauth/token through the facade (service mode)`,
    },
    `${urls.api}/oauth/token`,
    app,
    await grants(urls, app, user),
    () => [services.pidOf('rest-facade'), services.pidOf('auth')],
  );
  const authListener = new URL('/oauth/token', urls.login);
  authListener.hostname = '127.0.0.1';
  await rotation(
    bench,
    { name: 'rotation', path: `refresh-token rotation, ${ROTATION_CHAINS} chains, auth's own /oauth/token (service mode)` },
    authListener.href,
    app,
    await grants(urls, app, user),
    () => [services.pidOf('auth')],
  );
}

/** Order placement and market orders in service mode, in one trading world; `prefix` names this run's databases. */
async function serviceOrders(bench: Bench, services: ServiceMode, user: WorldUser, only: Set<PathName>, prefix: string) {
  const { urls } = services;
  const { symbol, traders } = await tradingWorld(urls, services.adminToken, user);
  const watched = () => (['rest-facade', 'gateway', 'oms', 'banking', 'accounts'] as const).map((app) => services.pidOf(app));
  if (only.has('orders')) await orders(bench, 'service mode', urls, user, traders, symbol, watched);
  const database = (name: string) => withDatabaseName(TEST_POSTGRES_URL, `${prefix}${name}`);
  const databases = { banking: database('banking'), accounts: database('accounts') };
  if (only.has('market')) await market(bench, traders.slice(1), urls, symbol, watched, databases);
}

/** ROTATION_CHAINS grants of `user` to `app`, each through the authorization-code + PKCE flow: their first refresh tokens. */
async function grants(urls: Urls, app: VendorApp, user: WorldUser): Promise<string[]> {
  progress(`making ${ROTATION_CHAINS} grants (authorization code + PKCE)…`);
  return refreshTokens(urls, app, user, ROTATION_CHAINS);
}

/** A READ_WRITE PAT for `email` (admin API), exchanged with a proof of `key`: the session token is bound to it. */
async function dpopPatSession(urls: Urls, adminToken: string, email: string, key: DpopKey): Promise<string> {
  const expires = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10);
  const pat = await http('POST', `${urls.admin}/admin/pats`, {
    token: adminToken,
    body: { email, name: 'bench dpop', scope: 'READ_WRITE', expires },
  });
  if (pat.status !== 201 && pat.status !== 200) throw new Error(`POST /admin/pats answered ${pat.status}`);
  const url = `${urls.api}/pat/login`;
  const login = await http('POST', url, { body: { token: pat.body.token }, headers: { dpop: proofSigner(key)('POST', url) } });
  if (login.status !== 200) throw new Error(`POST /v1/pat/login with a DPoP proof answered ${login.status}: ${JSON.stringify(login.body)}`);
  return login.body.token as string;
}

/** ROTATION_CHAINS chains at `url`, each exchanging its refresh token for the next (HTTP Basic, a form body). */
async function rotation(
  bench: Bench,
  row: Pick<Row, 'name' | 'path'>,
  url: string,
  client: Pick<VendorApp, 'clientId' | 'clientSecret'>,
  tokens: string[],
  watched: () => Watched[],
) {
  const load: RotationLoad & { warmupSeconds: number; seconds: number } = {
    kind: 'rotation',
    url,
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    refreshTokens: tokens,
    warmupSeconds: WARMUP_SECONDS,
    seconds: SECONDS,
  };
  // Instructions too: unlike rotations/s they compare ours with the peer's across hours.
  await bench.measure({ ...row, unit: 'rotations/s' }, load, watched, { instructions: true });
}

/**
 * The peer: node-oidc-provider (the certified OpenID/OAuth server) in a process of its own, its
 * storage in Redis under the run's prefix (deleted afterwards); ROTATION_CHAINS grants made
 * through its authorization-code + PKCE flow over HTTP, then the same rotation load as ours.
 */
async function oidcPeer(bench: Bench, id: string, logDir: string) {
  const port = await freePort();
  const prefix = `bench_${id}_oidc:`;
  const client: PeerClient = {
    issuer: `http://127.0.0.1:${port}`,
    clientId: 'bench-vendor',
    clientSecret: randomBytes(24).toString('hex'),
    redirectUri: 'https://vendor.example/callback',
  };
  const server = startProcess(
    'oidc-peer',
    process.execPath,
    ['tools/bench/oidc-peer/server.mjs'],
    {
      PORT: String(port),
      NODE_ENV: 'production',
      REDIS_URL: TEST_REDIS_URL,
      OIDC_REDIS_PREFIX: prefix,
      OIDC_CLIENT_ID: client.clientId,
      OIDC_CLIENT_SECRET: client.clientSecret,
      OIDC_REDIRECT_URI: client.redirectUri,
    },
    logDir,
  );
  let proxy: Started | undefined;
  try {
    await waitUntil(server, 'an answer', () => answers200(`${client.issuer}/.well-known/openid-configuration`));
    progress(`making ${ROTATION_CHAINS} grants at node-oidc-provider (authorization code + PKCE)…`);
    const tokens = await peerRefreshTokens(client, ROTATION_CHAINS);
    await rotation(
      bench,
      {
        name: 'oidc-peer',
        path: `refresh-token rotation, ${ROTATION_CHAINS} chains, node-oidc-provider's /token (Redis adapter, ES256 JWT access tokens)`,
      },
      `${client.issuer}/token`,
      client,
      tokens,
      () => [{ name: 'oidc-provider', pid: server.pid }],
    );
    // The same peer behind the leanest proxy hop Node offers: what a hop alone costs on this
    // machine (our token endpoint sits behind the facade, the peer behind nothing).
    const proxyPort = await freePort();
    const hop = startProcess(
      'oidc-peer-proxy',
      process.execPath,
      ['tools/bench/oidc-peer/proxy.mjs'],
      { PORT: String(proxyPort), TARGET: client.issuer },
      logDir,
    );
    proxy = hop;
    const proxied = `http://127.0.0.1:${proxyPort}`;
    await waitUntil(hop, 'an answer', () => answers200(`${proxied}/.well-known/openid-configuration`));
    progress(`making ${ROTATION_CHAINS} more grants at node-oidc-provider…`);
    const more = await peerRefreshTokens(client, ROTATION_CHAINS);
    await rotation(
      bench,
      {
        name: 'oidc-peer-proxied',
        path: `refresh-token rotation, ${ROTATION_CHAINS} chains, node-oidc-provider's /token behind a bare Node proxy (node:http + undici)`,
      },
      `${proxied}/token`,
      client,
      more,
      () => [
        { name: 'proxy', pid: hop.pid },
        { name: 'oidc-provider', pid: server.pid },
      ],
    );
  } finally {
    if (proxy) await stopProcess(proxy);
    await stopProcess(server);
    await deleteKeys(TEST_REDIS_URL, `${prefix}*`);
  }
}

/** One instrument, and 1 + ORDER_TRADERS funded users (`user` first): what the order and market paths trade with. */
async function tradingWorld(urls: Urls, adminToken: string, user: WorldUser): Promise<{ symbol: string; traders: WorldUser[] }> {
  progress(`listing an instrument and funding the accounts of 1 + ${ORDER_TRADERS} traders…`);
  const symbol = await listInstrument(urls, adminToken, '100.00');
  const traders = [user];
  for (let i = 0; i < ORDER_TRADERS; i++) traders.push(await createUser(urls, adminToken, 'trader'));
  for (const trader of traders) await fund(urls, trader, '10000000.00');
  return { symbol, traders };
}

/** The database's own commit rate on the same server: what the order paths are measured against. */
async function pgbench(bench: Bench, id: string) {
  progress(`pgbench -c 8 -j 2 -T ${SECONDS} on the same PostgreSQL server…`);
  const pg = await runPgbench(withDatabaseName(TEST_POSTGRES_URL, `bench_${id}_pgbench`), SECONDS);
  bench.rows.push({
    name: 'pgbench',
    path: `PostgreSQL commit rate: ${pg.command}${pg.latencyMs === undefined ? '' : `, latency average ${pg.latencyMs} ms`}`,
    unit: 'tps',
    perSecond: pg.tps,
    total: pg.transactions ?? 0,
    errors: 0,
    cpu: [],
  });
}

/**
 * Market buys of 1 share across the traders' accounts, MARKET_CONCURRENCY in flight (one per
 * account at a time), each timed from placement until banking and accounts both show its fill.
 */
async function market(
  bench: Bench,
  traders: WorldUser[],
  urls: Urls,
  symbol: string,
  watched: () => Watched[],
  databases: MarketLoad['databases'],
) {
  await bench.measure(
    {
      name: 'market',
      path:
        `market buys end to end (placement → fill → applied in banking and accounts), ${MARKET_CONCURRENCY} in flight ` +
        `over ${traders.length} users' ${traders.length * 2} accounts`,
      unit: 'fills/s',
    },
    {
      kind: 'market',
      api: urls.api,
      traders: traders.map((t) => ({ token: t.session, accounts: t.accounts })),
      symbol,
      quantity: '1',
      concurrency: MARKET_CONCURRENCY,
      databases,
      warmupSeconds: WARMUP_SECONDS,
      seconds: SECONDS,
    },
    watched,
    { moneyPath: true },
  );
}

/** Limit buys 40% below the market (within the ±50% band): they rest, each taking a hold in banking. */
async function orders(
  bench: Bench,
  mode: 'service mode' | 'all-in-one',
  urls: Urls,
  user: WorldUser,
  traders: WorldUser[],
  symbol: string,
  watched: () => Watched[],
) {
  const [oneUser, spread] =
    mode === 'all-in-one' ? (['all-in-one-orders', 'all-in-one-orders-spread'] as const) : (['orders', 'orders-spread'] as const);
  const limitPrice = (Math.floor((await lastPrice(urls, user, symbol)) * 60) / 100).toFixed(2);
  const url = `${urls.api}/oms/order`;
  const probe = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.session}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      accountId: user.accounts[0],
      symbol,
      side: 'BUY',
      type: 'LIMIT',
      timeInForce: 'GTC',
      quantity: '1',
      limitPrice,
    }),
  });
  if (probe.status !== 201) throw new Error(`POST /v1/oms/order: preflight answered ${probe.status}: ${await probe.text()}`);
  const load = { kind: 'orders' as const, url, symbol, limitPrice, warmupSeconds: WARMUP_SECONDS, seconds: SECONDS };
  // One user's two accounts: every order takes the same two accounts' locks (an account's spends are serial by design).
  await bench.measure(
    {
      name: oneUser,
      path: `order placement, ${mode}, POST /v1/oms/order (limit buys that rest, hold in banking; one user, 2 accounts)`,
      unit: 'orders/s',
    },
    { ...load, traders: [{ token: user.session, accounts: user.accounts }] },
    watched,
    { moneyPath: true },
  );
  // A broker's order flow: many users' accounts at once.
  await bench.measure(
    {
      name: spread,
      path: `order placement as above, ${mode}, ${ORDER_TRADERS} other users' ${ORDER_TRADERS * 2} accounts in turn`,
      unit: 'orders/s',
    },
    { ...load, traders: traders.slice(1).map((t) => ({ token: t.session, accounts: t.accounts })) },
    watched,
    { moneyPath: true },
  );
}

/** The order of the table's rows: each path beside what it is compared with. */
const ROW_ORDER: Row['name'][] = [
  'bare',
  'stock',
  'all-in-one',
  'service-rest',
  'service-rest-dpop',
  'gateway',
  'rotation-facade',
  'all-in-one-rotation',
  'rotation',
  'oidc-peer',
  'oidc-peer-proxied',
  'orders',
  'orders-spread',
  'all-in-one-orders',
  'all-in-one-orders-spread',
  'market',
  'pgbench',
];

/** What to measure: the working tree, or a snapshot of the last commit (`--head`) or another (`--commit <rev>`). */
function sourceOf(argv: string[]): Source {
  const at = argv.indexOf('--commit');
  return at >= 0 ? snapshotOfHead(argv[at + 1]) : argv.includes('--head') ? snapshotOfHead() : workingTree();
}

/** Each selected path, in an order that starts each target once; the all-in-one's memory lands in `measured`. */
async function runPaths(bench: Bench, source: Source, only: Set<PathName>, id: string, logDir: string, measured: { memory?: Memory }) {
  if (only.has('bare')) await bare(bench, logDir);
  if (only.has('stock')) await stockChain(bench, logDir);
  if (only.has('oidc-peer')) await oidcPeer(bench, id, logDir);
  if (only.has('all-in-one') || only.has('all-in-one-orders') || only.has('bars'))
    measured.memory = await allInOne(bench, source, only, id, logDir);
  if (['service-rest', 'gateway', 'rotation', 'orders', 'market'].some((p) => only.has(p as PathName)))
    await serviceMode(bench, source, only, id, logDir);
  if (['orders', 'market', 'all-in-one-orders'].some((p) => only.has(p as PathName))) await pgbench(bench, id);
}

/** The line above the table: the machine, the method, and what was measured. */
function runLine(source: Source): string {
  const what =
    source.root === ROOT ? (source.uncommitted.length ? ` + ${source.uncommitted.length} uncommitted file(s)` : '') : ' (a snapshot)';
  return (
    `\n${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}, ${CONNECTIONS} connections, ` +
    `${WARMUP_SECONDS} s warm-up + ${SECONDS} s per target, rate limits ${RATE_LIMITS ? 'on' : 'off'}, commit ${source.commit.slice(0, 7)}${what}\n`
  );
}

/** results.json: the figures, and what another run needs to be compared with them. */
function resultsOf(source: Source, only: Set<PathName>, rows: Row[], memory: Memory | undefined, words: string[]) {
  return {
    date: new Date().toISOString(),
    commit: source.commit,
    measured: source.root === ROOT ? 'the working tree' : 'a snapshot of the commit (--head, --commit)',
    uncommitted: source.uncommitted,
    machine: { cores: availableParallelism(), cpu: cpus()[0]?.model, node: process.version },
    method: {
      connections: CONNECTIONS,
      warmupSeconds: WARMUP_SECONDS,
      seconds: SECONDS,
      rotationChains: ROTATION_CHAINS,
      rateLimits: RATE_LIMITS ? 'on, budgets no load reaches' : 'off (BENCH_RATE_LIMITS=off)',
      paths: [...only],
    },
    rows,
    memory,
    ratios: words,
  };
}

async function main(): Promise<number> {
  const only = parseOnly(process.argv.slice(2));
  const id = uniqueId();
  const logDir = mkdtempSync(join(tmpdir(), 'bench-'));
  const source = sourceOf(process.argv);
  const generator = LoadGenerator.start();
  const bench = new Bench(generator, `bench_${id}_`);
  const measured: { memory?: Memory } = {};
  let failed = false;
  try {
    await runPaths(bench, source, only, id, logDir, measured);
  } catch (err) {
    failed = true;
    console.error(err instanceof Error ? err.message : err);
  } finally {
    generator.stop();
    source.remove();
  }

  const rows = [...bench.rows].sort((a, b) => ROW_ORDER.indexOf(a.name) - ROW_ORDER.indexOf(b.name));
  const words = ratiosInWords(rows, measured.memory);
  console.log(runLine(source));
  console.log(formatTable(rows));
  console.log();
  for (const line of words) console.log(`- ${line}`);

  const full = only.size === PATHS.length && !failed;
  const file = full ? join(ROOT, 'tools/bench/results.json') : join(logDir, 'results.json');
  writeFileSync(file, `${JSON.stringify(resultsOf(source, only, rows, measured.memory, words), null, 2)}\n`);
  console.log(`\nresults: ${file}`);

  for (const failure of bench.failures) console.error(`FAIL ${failure}`);
  if (failed || bench.failures.length) {
    console.error(`logs kept in ${logDir}`);
    return 1;
  }
  // A good full run's logs are noise (a partial run keeps its results there).
  if (full) rmSync(logDir, { recursive: true, force: true });
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
