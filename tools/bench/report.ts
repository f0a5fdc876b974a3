/** The bench's figures as a Markdown table, and each beside its baseline or target in words. */
import { MARKET_CONCURRENCY, ORDER_BURST, ORDER_TRADERS, ROTATION_CHAINS } from './load';
import type { CpuUse, MachineUse } from './proc';

/** The measured paths, by the name `--only` takes. */
// prettier-ignore
export const PATHS = ['bare', 'stock', 'all-in-one', 'all-in-one-orders', 'bars', 'webhooks', 'service-rest', 'gateway', 'rotation', 'oidc-peer',
  'orders', 'market'] as const;
export type PathName = (typeof PATHS)[number];

const CHAINS = `refresh-token rotation, ${ROTATION_CHAINS} chains,`;
const ORDERS = 'POST /v1/oms/order (limit buys that rest, hold in banking; one user, 2 accounts)';
const SPREAD = `${ORDER_TRADERS} other users' ${ORDER_TRADERS * 2} accounts in turn`;
const BURST = `${ORDER_BURST} orders arriving together every second (open loop, each timed from when it was due), ${SPREAD}`;
const MARKET = `${MARKET_CONCURRENCY} in flight over ${ORDER_TRADERS} users' ${ORDER_TRADERS * 2} accounts`;
/** How many endpoints the webhook rows' second half registers: as many as an app may have. */
export const WEBHOOK_ENDPOINTS = 10;
const DELIVERIES = "webhook deliveries queued at once, all-in-one's sender (lease, sign, post, record) to a bare receiver";
const POSTS = 'the same signed bodies posted by a plain undici loop (no queue, no record)';
const GRANTED = 'one user who granted a vendor app read:orders';

/** The table's rows in its order, and what it calls them. */
export const ROWS = [
  ['bars', 'GET /v1/market/bars/{symbol}?timeframe=1Min&limit=100 over 7 days of ticks, all-in-one'],
  ['bare', 'bare Node HTTP server (ceiling)'],
  ['stock', 'stock @apollo/gateway → stock @apollo/subgraph (no auth, no database)'],
  ['all-in-one', 'ours, all-in-one (<n> processes), GET /v1/accounts, PAT session'],
  ['service-rest', 'ours, service mode (six processes), GET /v1/accounts, PAT session'],
  ['service-rest-dpop', 'ours, service mode, GET /v1/accounts, PAT session bound to a DPoP key (a proof per request)'],
  ['gateway', 'ours, service mode, the same query straight at our gateway'],
  ['rotation-facade', `${CHAINS} {base_url}/oauth/token through the facade (service mode)`],
  ['all-in-one-rotation', `${CHAINS} {base_url}/oauth/token (all-in-one)`],
  ['rotation', `${CHAINS} auth's own /oauth/token (service mode)`],
  ['rotation-ingress', `${CHAINS} {base_url}/oauth/token at HAProxy, routed straight to auth (service mode, as deployed)`],
  ['oidc-peer-ingress', `${CHAINS} node-oidc-provider's /token behind the same HAProxy`],
  ['oidc-peer', `${CHAINS} node-oidc-provider's /token (Redis adapter, ES256 JWT access tokens)`],
  [
    'oidc-peer-cluster',
    `${CHAINS} node-oidc-provider's /token in two processes (Node's cluster, its Redis adapter), as npm start runs ours`,
  ],
  ['oidc-peer-proxied', `${CHAINS} node-oidc-provider's /token behind a bare Node proxy (node:http + undici)`],
  ['orders', `order placement, service mode, ${ORDERS}`],
  ['orders-spread', `order placement as above, service mode, ${SPREAD}`],
  ['all-in-one-orders', `order placement, all-in-one, ${ORDERS}`],
  ['all-in-one-orders-spread', `order placement as above, all-in-one, ${SPREAD}`],
  ['orders-single', `order placement, service mode, one order at a time, ${SPREAD}`],
  ['orders-burst', `order placement, service mode, ${BURST}`],
  ['all-in-one-orders-single', `order placement, all-in-one, one order at a time, ${SPREAD}`],
  ['all-in-one-orders-burst', `order placement, all-in-one, ${BURST}`],
  ['webhooks', `${DELIVERIES}, 1 endpoint`],
  ['webhook-posts', `${POSTS}, 1 in flight`],
  ['webhooks-fanout', `${DELIVERIES}, ${WEBHOOK_ENDPOINTS} endpoints (a lane each)`],
  ['webhook-posts-fanout', `${POSTS}, ${WEBHOOK_ENDPOINTS} in flight`],
  ['webhooks-orders', `order placement, all-in-one, ${ORDERS}, ${GRANTED}, no webhook endpoint`],
  [
    'webhooks-orders-fanout',
    `order placement as above, the app's ${WEBHOOK_ENDPOINTS} endpoints registered (each order → ${WEBHOOK_ENDPOINTS} deliveries)`,
  ],
  ['market', `market buys end to end (placement → fill → applied in banking and accounts), ${MARKET}`],
  ['pgbench', 'PostgreSQL commit rate'],
] as const;
export type RowName = (typeof ROWS)[number][0];
export const labelOf = (name: RowName) => ROWS.find(([n]) => n === name)![1];

export interface Row {
  name: RowName;
  /** What was measured, as the table shows it. */
  path: string;
  unit: 'req/s' | 'rotations/s' | 'orders/s' | 'fills/s' | 'deliveries/s' | 'tps';
  perSecond: number;
  /** Latency in ms. */
  p50?: number;
  p99?: number;
  /** Answers in the window, and how many were wrong. */
  total: number;
  errors: number;
  cpu: CpuUse[];
  /** The whole machine in the window (PostgreSQL, Redis and the kernel included). */
  machine?: MachineUse;
}

export interface Memory {
  /** Summed resident size of the all-in-one's processes after start, and the peak while its REST path was loaded (bytes). */
  afterStart: number;
  peakUnderLoad: number;
  processes: { name: string; bytes: number }[];
}

/** The refresh rotation rate to reach, per second, and the most CPU an order may cost across our processes (ms). */
const ROTATION_TARGET = 1600;
const ORDER_CPU_TARGET_MS = 2.5;
/** Rotation against the peer run the way ours runs: at least this much faster. */
const PEER_TARGET = 1.2;
/** What a trader waits for an order: alone, and among 50 arriving at once. */
const SINGLE_ORDER_P50_TARGET_MS = 5;
const BURST_P99_TARGET_MS = 50;

const thousands = (n: number) => Math.round(n).toLocaleString('en-US');
/** autocannon counts latency in whole milliseconds: 0 is an answer within the first one. */
const ms = (n: number | undefined) => (n === undefined ? '—' : n < 1 ? '<1 ms' : n < 10 ? `${n.toFixed(1)} ms` : `${Math.round(n)} ms`);
const mb = (bytes: number) => `${Math.round(bytes / (1024 * 1024))} MB`;
/** Two significant digits below 1 (0.45×), two decimals above (1.25×). */
const ratio = (value: number) => (Number.isFinite(value) ? `${value >= 1 ? value.toFixed(2) : value.toPrecision(2)}×` : '—');
/** The sentences whose rows were measured (the others are `undefined` or `false`). */
const said = (lines: unknown[]) => lines.filter((line): line is string => typeof line === 'string');
type Find = (name: RowName) => Row | undefined;
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** CPU-seconds per answered request, in ms, of the processes named (NaN without answers), and as the words show it. */
const cpuMs = (row: Row, ...names: string[]) =>
  (sum(row.cpu.filter((c) => names.includes(c.name)).map((c) => c.seconds)) / row.total) * 1000;
const cpuText = (row: Row, ...names: string[]) => (row.total ? cpuMs(row, ...names).toFixed(2) : '—');

/** ms of CPU per answer of each process named in the row (the load generator's too: in a baseline loop it is the sender). */
const cpuEach = (row: Row, leaveOut: string[] = []) =>
  row.cpu
    .filter((c) => !leaveOut.includes(c.name))
    .map((c) => `${c.name} ${cpuText(row, c.name)}`)
    .join(', ');

/** Markdown, columns padded so it reads as well on a terminal; only request/answer rows compare with the stock chain and the bare server. */
export function formatTable(rows: Row[]): string {
  const [stock, bare] = [rows.find((r) => r.name === 'stock'), rows.find((r) => r.name === 'bare')];
  const header = ['Path', 'per second', 'p50', 'p99', 'CPU per process (% of one core)', 'vs stock chain', 'vs bare'];
  const cells = rows.map((r) => {
    const versus = (base?: Row) => (r.unit === 'req/s' && base ? ratio(r.perSecond / base.perSecond) : '—');
    const cpu = r.cpu.map((c) => `${c.name} ${Math.round(c.percent)}%`).join(', ') || '—';
    return [r.path, `${thousands(r.perSecond)} ${r.unit}`, ms(r.p50), ms(r.p99), cpu, versus(stock), versus(bare)];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const left = (i: number) => i === 0 || i === 4;
  const line = (c: string[]) => `| ${c.map((v, i) => (left(i) ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => `${'-'.repeat(w + 1)}${left(i) ? '-' : ':'}`).join('|')}|`;
  return [line(header), rule, ...cells.map(line)].join('\n');
}

/** ms of CPU per order (or fill) in each of our processes and in all, against the target; PostgreSQL's and the machine's beside. */
function cpuPerOrder(label: string, row: Row | undefined): string | undefined {
  // The load generator, PostgreSQL and a bench receiver stand for the world around us.
  const ours = row?.cpu.filter((c) => !['load', 'postgres', 'receiver'].includes(c.name)) ?? [];
  if (!row?.total || !ours.length) return undefined;
  const total = cpuMs(row, ...ours.map((c) => c.name));
  const { machine } = row;
  // The target counts the whole machine (our processes, PostgreSQL, the kernel) when it was read; ours alone otherwise.
  const machineMs = machine ? (machine.seconds / row.total) * 1000 : undefined;
  const judged = machineMs ?? total;
  return (
    `CPU per ${label}: ${ours.map((c) => `${c.name} ${cpuText(row, c.name)}`).join(', ')} ms = ${total.toFixed(2)} ms in all` +
    (row.cpu.some((c) => c.name === 'postgres') ? `; PostgreSQL ${cpuText(row, 'postgres')} ms` : '') +
    (machine
      ? `; the machine was ${Math.round(machine.percent)}% busy of ${machine.cores * 100}% (${machineMs!.toFixed(2)} ms per ${label.replace(/ \(.*\)$/, '')}, everything included)`
      : '') +
    ` (target ≤ ${ORDER_CPU_TARGET_MS} ms${machine ? ' of the machine' : ''}: ${judged <= ORDER_CPU_TARGET_MS ? 'met' : 'not met'}).`
  );
}

/** The REST reads beside the stock chain's, the bars read beside the all-in-one's, DPoP beside bearer, and CPU per request beside the stock chain's. */
function readsInWords(at: Find): string[] {
  const [stock, read, bars, hop, rest, dpop] = (
    ['stock', 'all-in-one', 'bars', 'gateway', 'service-rest', 'service-rest-dpop'] as const
  ).map(at);
  const versusStock = (label: string, row?: Row) =>
    row &&
    stock &&
    `${label}: ${thousands(row.perSecond)} req/s = ${ratio(row.perSecond / stock.perSecond)} the stock chain's ${thousands(stock.perSecond)} req/s ` +
      `(target ≥ 1.0×); p99 ${ms(row.p99)} against its ${ms(stock.p99)}.`;
  return said([
    versusStock('REST, all-in-one (GET /v1/accounts)', read),
    versusStock('REST, service mode (GET /v1/accounts)', rest),
    bars &&
      read &&
      `Bars over a week of ticks (100 one-minute bars a page): ${thousands(bars.perSecond)} req/s = ${ratio(bars.perSecond / read.perSecond)} ` +
        `the all-in-one's GET /v1/accounts (${thousands(read.perSecond)} req/s); p99 ${ms(bars.p99)}.`,
    dpop &&
      rest &&
      `REST read with DPoP (service mode): ${thousands(dpop.perSecond)} req/s = ${ratio(dpop.perSecond / rest.perSecond)} the bearer read's ` +
        `${thousands(rest.perSecond)} req/s; p99 ${ms(dpop.p99)} against ${ms(rest.p99)}; ` +
        `facade CPU per request ${cpuText(dpop, 'facade')} ms against ${cpuText(rest, 'facade')} ms.`,
    hop &&
      stock &&
      `Gateway CPU per request: ours ${cpuText(hop, 'gateway')} ms alone${rest ? ` (${cpuText(rest, 'gateway')} ms in the REST path)` : ''}, ` +
        `the stock gateway ${cpuText(stock, 'gateway')} ms: ${ratio(cpuMs(hop, 'gateway') / cpuMs(stock, 'gateway'))} (target ≤ 1.0×).`,
    rest &&
      stock &&
      `CPU per REST read across our processes (facade, gateway, accounts): ${cpuText(rest, 'facade', 'gateway', 'accounts')} ms; ` +
        `the stock chain: ${cpuText(stock, 'gateway', 'subgraph')} ms.`,
  ]);
}

/** Rotation against its target, and ours beside node-oidc-provider's (the same chains, Basic auth, form body) in each place it was measured. */
function rotationsInWords(at: Find): string[] {
  const [rotation, peer, proxied] = (['rotation', 'oidc-peer', 'oidc-peer-proxied'] as const).map(at);
  const [allInOne, cluster] = [at('all-in-one-rotation'), at('oidc-peer-cluster')];
  const [ingress, peerIngress] = [at('rotation-ingress'), at('oidc-peer-ingress')];
  const places = [
    ['rotation-facade', "ours at {base_url}/oauth/token (the metadata's token_endpoint) through the facade, service mode"],
    ['all-in-one-rotation', 'ours at {base_url}/oauth/token, all-in-one'],
    ['rotation', "ours at auth's own listener, service mode (for reference)"],
  ] as const;
  const versusPeer = ([name, label]: (typeof places)[number]) => {
    const row = at(name);
    return (
      row &&
      peer &&
      `Rotation, ${label}: ${thousands(row.perSecond)}/s ÷ node-oidc-provider's ${thousands(peer.perSecond)}/s = ${ratio(row.perSecond / peer.perSecond)}; ` +
        `p99 ${ms(row.p99)} against its ${ms(peer.p99)}.`
    );
  };
  return said([
    rotation &&
      `Refresh-token rotation (${ROTATION_CHAINS} chains, reuse detection on): ${thousands(rotation.perSecond)}/s = ${ratio(rotation.perSecond / ROTATION_TARGET)} ` +
        `the ${thousands(ROTATION_TARGET)}/s target, p99 ${ms(rotation.p99)}.`,
    ...places.map(versusPeer),
    allInOne &&
      cluster &&
      `Rotation, all-in-one beside the peer run the same way (two processes of Node's cluster): ${thousands(allInOne.perSecond)}/s ÷ ` +
        `${thousands(cluster.perSecond)}/s = ${ratio(allInOne.perSecond / cluster.perSecond)} (target ≥ ${PEER_TARGET}×: ` +
        `${allInOne.perSecond / cluster.perSecond >= PEER_TARGET ? 'met' : 'not met'}); p99 ${ms(allInOne.p99)} against its ${ms(cluster.p99)}.`,
    ingress &&
      peerIngress &&
      `Rotation, service mode as deployed, both behind the same HAProxy ({base_url}/oauth/* routed straight to auth): ` +
        `${thousands(ingress.perSecond)}/s ÷ the peer's ${thousands(peerIngress.perSecond)}/s = ${ratio(ingress.perSecond / peerIngress.perSecond)} ` +
        `(target ≥ ${PEER_TARGET}×: ${ingress.perSecond / peerIngress.perSecond >= PEER_TARGET ? 'met' : 'not met'}); p99 ${ms(ingress.p99)} against its ${ms(peerIngress.p99)}; ` +
        `CPU per rotation: ours ${cpuEach(ingress, ['load'])} ms, the peer's ${cpuEach(peerIngress, ['load'])} ms.`,
    proxied &&
      peer &&
      `The peer behind a bare Node proxy (the hop alone, nothing of an edge): ${thousands(proxied.perSecond)}/s = ${ratio(proxied.perSecond / peer.perSecond)} itself; ` +
        `the proxy's CPU ${cpuText(proxied, 'proxy')} ms per rotation, the peer's ${cpuText(peer, 'oidc-provider')} ms.`,
  ]);
}

/** Order placement in one run mode (one user's accounts, then many users'), beside pgbench, with CPU per order. */
function ordersInWords(at: Find, mode: string, prefix: '' | 'all-in-one-'): string[] {
  const [orders, spread, pgbench] = [at(`${prefix}orders`), at(`${prefix}orders-spread`), at('pgbench')];
  const [single, burst] = [at(`${prefix}orders-single`), at(`${prefix}orders-burst`)];
  return said([
    orders &&
      pgbench &&
      `Order placement, ${mode}: ${thousands(orders.perSecond)} orders/s ÷ pgbench ${thousands(pgbench.perSecond)} tps on the same server = ` +
        `${ratio(orders.perSecond / pgbench.perSecond)}, p99 ${ms(orders.p99)}` +
        (spread
          ? `; spread over many users' accounts ${thousands(spread.perSecond)} orders/s = ${ratio(spread.perSecond / pgbench.perSecond)}, p99 ${ms(spread.p99)}.`
          : '.') +
        ' (Target ≥ 0.35×, p99 ≤ 120 ms.)',
    cpuPerOrder(`order placed (${mode}, one user)`, orders),
    cpuPerOrder(`order placed (${mode}, spread)`, spread),
    single &&
      `One order at a time, ${mode}: p50 ${ms(single.p50)}, p99 ${ms(single.p99)} (target p50 ≤ ${SINGLE_ORDER_P50_TARGET_MS} ms: ` +
        `${(single.p50 ?? Infinity) <= SINGLE_ORDER_P50_TARGET_MS ? 'met' : 'not met'}).`,
    burst &&
      `${ORDER_BURST} orders arriving together each second, ${mode}: p50 ${ms(burst.p50)}, p99 ${ms(burst.p99)} ` +
        `(target p99 ≤ ${BURST_P99_TARGET_MS} ms: ${(burst.p99 ?? Infinity) <= BURST_P99_TARGET_MS ? 'met' : 'not met'}).`,
    cpuPerOrder(`order placed (${mode}, ${ORDER_BURST} a second)`, burst),
  ]);
}

/**
 * The sender beside plain posting of the same bodies at the same concurrency (what the queue,
 * leases and records cost), and order placement with the app's endpoints beside without.
 */
function webhooksInWords(at: Find): string[] {
  const [one, oneBase, many, manyBase, orders, fanout] = (
    ['webhooks', 'webhook-posts', 'webhooks-fanout', 'webhook-posts-fanout', 'webhooks-orders', 'webhooks-orders-fanout'] as const
  ).map(at);
  const versus = (label: string, row?: Row, base?: Row) =>
    row &&
    base &&
    `Webhook deliveries, ${label}: ${thousands(row.perSecond)}/s = ${ratio(row.perSecond / base.perSecond)} a plain undici loop posting ` +
      `the same signed bodies (${thousands(base.perSecond)}/s); CPU per delivery ${cpuEach(row)} ms, per plain post ${cpuEach(base)} ms.`;
  return said([
    versus('1 endpoint, one at a time', one, oneBase),
    versus(`${WEBHOOK_ENDPOINTS} endpoints side by side`, many, manyBase),
    orders &&
      fanout &&
      `Order placement with webhooks (all-in-one): ${WEBHOOK_ENDPOINTS} endpoints ${thousands(fanout.perSecond)} orders/s = ` +
        `${ratio(fanout.perSecond / orders.perSecond)} none (${thousands(orders.perSecond)} orders/s); p50 ${ms(fanout.p50)} against ${ms(orders.p50)}, ` +
        `p99 ${ms(fanout.p99)} against ${ms(orders.p99)}.`,
    cpuPerOrder('order placed (no webhook endpoint)', orders),
    cpuPerOrder(`order placed (${WEBHOOK_ENDPOINTS} webhook endpoints)`, fanout),
  ]);
}

/** Each measured path beside its baseline or target, as one sentence; a path that was not measured is left out. */
export function ratiosInWords(rows: Row[], memory?: Memory): string[] {
  const at: Find = (name) => rows.find((r) => r.name === name);
  const [market, pgbench] = [at('market'), at('pgbench')];
  return said([
    ...readsInWords(at),
    ...rotationsInWords(at),
    ...ordersInWords(at, 'service mode', ''),
    ...ordersInWords(at, 'all-in-one', 'all-in-one-'),
    ...webhooksInWords(at),
    market &&
      `Market orders end to end: ${thousands(market.perSecond)} fills settled/s` +
        (pgbench ? ` ÷ pgbench ${thousands(pgbench.perSecond)} tps = ${ratio(market.perSecond / pgbench.perSecond)}` : '') +
        `; placement → applied in banking and accounts p50 ${ms(market.p50)}, p99 ${ms(market.p99)}.`,
    cpuPerOrder('market order settled (its event stream and settlement reads included)', market),
    memory &&
      `Memory, all-in-one (${memory.processes.length} processes): ${mb(memory.afterStart)} resident after start ` +
        `(${memory.processes.map((p) => `${p.name} ${mb(p.bytes)}`).join(', ')}), ${mb(memory.peakUnderLoad)} at the peak of the REST load.`,
  ]);
}

/** `--only a,b` (or `--only=a,b`): the paths to run, every one when absent. */
export function parseOnly(argv: string[]): Set<PathName> {
  const at = argv.findIndex((a) => a === '--only' || a.startsWith('--only='));
  if (at < 0) return new Set(PATHS);
  const value = argv[at]!.includes('=') ? argv[at]!.slice('--only='.length) : argv[at + 1];
  if (!value) throw new Error(`--only needs a list: ${PATHS.join(',')}`);
  const names = value.split(',').map((s) => s.trim());
  const unknown = names.filter((n) => !(PATHS as readonly string[]).includes(n));
  if (unknown.length) throw new Error(`--only: unknown path ${unknown.join(', ')} (known: ${PATHS.join(', ')})`);
  return new Set(names as PathName[]);
}
