/**
 * Throughput of one read (alice's accounts) at each hop of the stack, against a bare Node
 * server as the machine's ceiling: `npm run bench` (BENCH_SECONDS=5 by default).
 *
 * Everything shares one process (the load generator in a worker thread), so the numbers are for
 * comparing hops with one another on this machine, not a capacity figure for production.
 * Nothing asserts on time; the run fails only when a target answers wrongly.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import autocannon from 'autocannon';
import { scopesForPatAccess } from '@trading/auth';
import { dropDatabase, withDatabaseName } from '@trading/db';
import { TEST_POSTGRES_URL, uniqueId } from '@trading/testing';
import { createPlatform, DEMO_ACCOUNTS, type Platform } from '../app';
import { inProcessPlatformConfig } from '../e2e/test-platform';

const CONNECTIONS = 50;
const WARMUP_SECONDS = 1;
const SECONDS = positiveInt(process.env['BENCH_SECONDS'], 5);
/** Above this share of failed requests a number measures the failure path, not the target. */
const MAX_ERROR_RATE = 0.01;
const DATABASES = ['auth', 'accounts', 'banking', 'oms'];
/** alice's demo margin account: positions, cash and margin all have data. */
const MARGIN_ACCOUNT = DEMO_ACCOUNTS[1]!.id;
/** The operation the facade sends for GET /accounts, so every hop does the same work. */
const ACCOUNTS_QUERY = 'query Accounts { accounts { id number type status baseCurrency createdAt } }';

interface Target {
  name: string;
  url: string;
  method: 'GET' | 'POST';
  body?: string;
  /** Called right before the target runs: the subgraph's claims header lives only 60 s. */
  headers: () => Promise<Record<string, string>>;
  /** False when the body legitimately changes between requests (e.g. an `asOf` time). */
  stableBody?: boolean;
}

interface Measurement {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  total: number;
}

function positiveInt(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`BENCH_SECONDS must be a positive integer, got "${value}"`);
  return n;
}

function daysAhead(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

async function startBareServer(): Promise<{ url: string; server: Server }> {
  const body = JSON.stringify({ ok: true });
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}

/**
 * One request before measuring: a target that is down or refusing would otherwise be timed at
 * its error path. GraphQL errors come back as 200, so the body must carry no `errors` either.
 */
async function preflight(target: Target, headers: Record<string, string>): Promise<string> {
  const res = await fetch(target.url, { method: target.method, headers, body: target.body });
  const text = await res.text();
  if (res.status !== 200 || text.includes('"errors"')) {
    throw new Error(`${target.name}: preflight answered ${res.status}: ${text.slice(0, 300)}`);
  }
  return text;
}

async function measure(target: Target): Promise<Measurement> {
  const headers = await target.headers();
  // The demo data does not change during the run, so any other body is a wrong answer.
  const expectBody = await preflight(target, headers);
  // One worker thread keeps the load generator off the thread all the servers share: on the
  // main thread it took about half of the bare server's throughput.
  const options = {
    url: target.url,
    method: target.method,
    headers,
    body: target.body,
    connections: CONNECTIONS,
    workers: 1,
    ...(target.stableBody === false ? {} : { expectBody }),
  };
  await autocannon({ ...options, duration: WARMUP_SECONDS });
  const result = await autocannon({ ...options, duration: SECONDS });
  const errors = result.non2xx + result.errors + result.mismatches;
  return {
    name: target.name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors,
    total: result.requests.total + result.errors,
  };
}

/** Two significant digits, so a hop at 0.4 % of the ceiling does not print as 0.00x. */
function ratio(value: number): string {
  return `${value >= 1 ? value.toFixed(2) : value.toPrecision(2)}x`;
}

function printTable(rows: Measurement[], baseline: number): void {
  const header = ['target', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'vs bare'];
  const cells = rows.map((r) => [r.name, r.rps.toFixed(0), r.p50.toFixed(1), r.p99.toFixed(1), String(r.errors), ratio(r.rps / baseline)]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const c of cells) console.log(line(c));
}

async function main(): Promise<number> {
  const prefix = `bench_${uniqueId()}_`;
  const config = inProcessPlatformConfig(prefix, { PLATFORM_SEED_DEMO: 'true' });

  let platform: Platform | undefined;
  let bare: Server | undefined;
  try {
    platform = await createPlatform(config);
    const { urls } = platform;
    const bareServer = await startBareServer();
    bare = bareServer.server;

    const alice = await platform.auth.users.findByEmail('alice@example.com');
    if (!alice) throw new Error('demo user alice@example.com was not seeded');
    const access = 'READ_ONLY' as const;
    const { token: pat } = await platform.auth.pats.create({ userId: alice.id, name: 'bench', access, expires: daysAhead(30) });
    const login = await fetch(`${urls.api}/pat/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: pat }),
    });
    if (login.status !== 200) throw new Error(`PAT login answered ${login.status}: ${await login.text()}`);
    const { token: jwt } = (await login.json()) as { token: string };

    const bearer = { authorization: `Bearer ${jwt}` };
    const graphql = { 'content-type': 'application/json' };
    const operation = JSON.stringify({ operationName: 'Accounts', query: ACCOUNTS_QUERY });
    const gatewaySigner = platform.signerFor('gateway');
    const targets: Target[] = [
      { name: 'bare node http', url: bareServer.url, method: 'GET', headers: async () => ({}) },
      { name: 'REST facade GET /accounts', url: `${urls.api}/accounts`, method: 'GET', headers: async () => bearer },
      { name: 'gateway (GraphQL)', url: urls.gateway, method: 'POST', body: operation, headers: async () => ({ ...bearer, ...graphql }) },
      {
        name: 'accounts subgraph',
        url: urls.accounts,
        method: 'POST',
        body: operation,
        // The subgraph only checks the signature, expiry and scopes; any sid will do.
        headers: async () => ({
          ...graphql,
          'x-internal-claims': await gatewaySigner.sign(
            { sub: alice.id, sid: 'bench', kind: 'pat', scope: scopesForPatAccess(access), access },
            'accounts',
          ),
        }),
      },
      // Issue 5 reads: a paginated list, a ledger aggregate, and a federated @requires across all three subgraphs.
      // Positions carry market prices, which the paper market moves every tick.
      {
        name: 'REST GET /accounts/{id}/positions',
        url: `${urls.api}/accounts/${MARGIN_ACCOUNT}/positions`,
        method: 'GET',
        headers: async () => bearer,
        stableBody: false,
      },
      {
        name: 'REST GET /banking/{id}/balance',
        url: `${urls.api}/banking/${MARGIN_ACCOUNT}/balance`,
        method: 'GET',
        headers: async () => bearer,
      },
      {
        name: 'REST GET /accounts/{id}/margin',
        url: `${urls.api}/accounts/${MARGIN_ACCOUNT}/margin`,
        method: 'GET',
        headers: async () => bearer,
        stableBody: false,
      },
    ];

    const rows: Measurement[] = [];
    for (const target of targets) {
      process.stderr.write(`measuring ${target.name} (${WARMUP_SECONDS}s warm-up + ${SECONDS}s)…\n`);
      rows.push(await measure(target));
    }

    console.log(
      `cores: ${availableParallelism()}  node: ${process.version}  connections: ${CONNECTIONS}  duration: ${SECONDS}s per target`,
    );
    printTable(rows, rows[0]!.rps);

    const failing = rows.filter((r) => r.errors > r.total * MAX_ERROR_RATE);
    for (const r of failing) console.error(`FAIL ${r.name}: ${r.errors} of ${r.total} requests failed (> ${MAX_ERROR_RATE * 100}%)`);
    return failing.length ? 1 : 0;
  } finally {
    if (bare) {
      const server = bare;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    await platform?.close();
    for (const name of DATABASES)
      await dropDatabase(withDatabaseName(platform?.databaseServerUrl ?? TEST_POSTGRES_URL, `${prefix}${name}`));
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
