/** The bench's figures as a Markdown table, and each beside its baseline or target in words. */
import type { InstructionUse } from './instructions';
import type { PgWaits } from './pg-waits';
import { MARKET_CONCURRENCY, ORDER_TRADERS, ROTATION_CHAINS } from './load';
import type { CpuUse, MachineUse } from './proc';

/** The measured paths, by the name `--only` takes. */
// prettier-ignore
export const PATHS = ['bare', 'stock', 'all-in-one', 'all-in-one-orders', 'bars', 'service-rest', 'gateway', 'rotation', 'oidc-peer', 'orders',
  'market'] as const;
export type PathName = (typeof PATHS)[number];

const CHAINS = `refresh-token rotation, ${ROTATION_CHAINS} chains,`;
const ORDERS = 'POST /v1/oms/order (limit buys that rest, hold in banking; one user, 2 accounts)';
const SPREAD = `${ORDER_TRADERS} other users' ${ORDER_TRADERS * 2} accounts in turn`;
const MARKET = `${MARKET_CONCURRENCY} in flight over ${ORDER_TRADERS} users' ${ORDER_TRADERS * 2} accounts`;

/** The table's rows in its order, each beside what it is compared with (`bars`, added last, has always come first), and what it calls them. */
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
  ['oidc-peer', `${CHAINS} node-oidc-provider's /token (Redis adapter, ES256 JWT access tokens)`],
  ['oidc-peer-proxied', `${CHAINS} node-oidc-provider's /token behind a bare Node proxy (node:http + undici)`],
  ['orders', `order placement, service mode, ${ORDERS}`],
  ['orders-spread', `order placement as above, service mode, ${SPREAD}`],
  ['all-in-one-orders', `order placement, all-in-one, ${ORDERS}`],
  ['all-in-one-orders-spread', `order placement as above, all-in-one, ${SPREAD}`],
  ['market', `market buys end to end (placement → fill → applied in banking and accounts), ${MARKET}`],
  ['pgbench', 'PostgreSQL commit rate'],
] as const;
export type RowName = (typeof ROWS)[number][0];
export const labelOf = (name: RowName) => ROWS.find(([n]) => n === name)![1];

export interface Row {
  name: RowName;
  /** What was measured, as the table shows it. */
  path: string;
  unit: 'req/s' | 'rotations/s' | 'orders/s' | 'fills/s' | 'tps';
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
  /** What the run's database backends waited on in the window (the money paths only). */
  waits?: PgWaits;
  /** Instructions retired in the window, where perf can count them (the money paths and rotation). */
  instructions?: InstructionUse;
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

const thousands = (n: number) => Math.round(n).toLocaleString('en-US');
/** autocannon counts latency in whole milliseconds: 0 is an answer within the first one. */
const ms = (n: number | undefined) => (n === undefined ? '—' : n < 1 ? '<1 ms' : n < 10 ? `${n.toFixed(1)} ms` : `${Math.round(n)} ms`);
const mb = (bytes: number) => `${Math.round(bytes / (1024 * 1024))} MB`;
const cpuMs = (ms?: number) => (ms === undefined ? 'unknown' : `${ms.toFixed(2)} ms`);
const byName = (rows: Row[], name: Row['name']) => rows.find((r) => r.name === name);
/** Our processes: neither the load generator nor the database server. */
const isOurs = (c: { name: string }) => c.name !== 'load' && c.name !== 'postgres';

/** Two significant digits below 1 (0.45×), two decimals above (1.25×). */
export const ratio = (value: number | undefined) =>
  value === undefined || !Number.isFinite(value) ? '—' : `${value >= 1 ? value.toFixed(2) : value.toPrecision(2)}×`;

/** CPU-seconds per answered request, in ms, of the processes named (all when none are). */
export function cpuMsPerRequest(row: Row, names?: string[]): number | undefined {
  if (!row.total) return undefined;
  const seconds = row.cpu.filter((c) => !names || names.includes(c.name)).reduce((sum, c) => sum + c.seconds, 0);
  return (seconds / row.total) * 1000;
}

/** Markdown, columns padded so it reads as well on a terminal; only request/answer rows compare with the stock chain and the bare server. */
export function formatTable(rows: Row[]): string {
  const [stock, bare] = [byName(rows, 'stock'), byName(rows, 'bare')];
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
export function cpuPerOrderInWords(label: string, row: Row): string | undefined {
  const ours = row.cpu.filter(isOurs);
  if (!row.total || !ours.length) return undefined;
  const each = ours.map((c) => `${c.name} ${((c.seconds / row.total) * 1000).toFixed(2)}`);
  const names = ours.map((c) => c.name);
  const total = cpuMsPerRequest(row, names)!;
  const postgres = cpuMsPerRequest(row, ['postgres']);
  const { machine } = row;
  return (
    `CPU per ${label}: ${each.join(', ')} ms = ${total.toFixed(2)} ms in all ` +
    `(target ≤ ${ORDER_CPU_TARGET_MS} ms: ${total <= ORDER_CPU_TARGET_MS ? 'met' : 'not met'})` +
    (postgres && row.cpu.some((c) => c.name === 'postgres') ? `; PostgreSQL ${postgres.toFixed(2)} ms` : '') +
    (machine
      ? `; the machine was ${Math.round(machine.percent)}% busy of ${machine.cores * 100}% (${((machine.seconds / row.total) * 1000).toFixed(2)} ms per ${label.replace(/ \(.*\)$/, '')}, everything included)`
      : '') +
    '.'
  );
}

/** Millions of instructions our processes (or the peer's) retired per request of `row`, when perf counted them. */
function instructionsPer(row: Row): number | undefined {
  if (!row.instructions || !row.total) return undefined;
  return row.instructions.byName.filter(isOurs).reduce((sum, c) => sum + c.instructions, 0) / row.total / 1e6;
}

/** Instructions per order (or fill) in each of our processes, in PostgreSQL and in the whole machine, in millions. */
export function instructionsInWords(label: string, row: Row): string | undefined {
  const counted = row.instructions;
  if (!counted || !row.total) return undefined;
  const per = (n: number) => (n / row.total / 1e6).toFixed(2);
  const postgres = counted.byName.find((c) => c.name === 'postgres');
  const each = counted.byName.filter(isOurs).map((c) => `${c.name} ${per(c.instructions)}`);
  return (
    `Instructions per ${label} (perf), in millions: ${each.join(', ')} = ${instructionsPer(row)!.toFixed(2)} in ours` +
    (postgres ? `; PostgreSQL ${per(postgres.instructions)}` : '') +
    `; the machine ${per(counted.machine)}, everything included.`
  );
}

/** What the database's backends waited on while `row` was measured, with the commonest waits and their statements. */
export function pgWaitsInWords(label: string, row: Row): string | undefined {
  const waits = row.waits;
  if (!waits?.samples) return undefined;
  const top = waits.top.map((w) => `${w.event} ${w.backends.toFixed(2)} (${w.statement}…)`);
  return (
    `PostgreSQL while ${label}: ${waits.busy.toFixed(2)} backends running a statement on average, ` +
    `${waits.waiting.toFixed(2)} of them waiting` +
    (top.length ? `: ${top.join('; ')}` : '') +
    ` (${waits.samples} samples).`
  );
}

/** A money path's CPU, instructions and database waits per order, each sentence where it was measured. */
function costsInWords(row: Row | undefined, cost: string, waiting: string, counted = cost): string[] {
  const words = row && [cpuPerOrderInWords(cost, row), instructionsInWords(counted, row), pgWaitsInWords(waiting, row)];
  return (words ?? []).filter((w) => w !== undefined);
}

/** Our rotation beside node-oidc-provider's (the same 32 chains, Basic auth, form body), one sentence per place it was measured. */
export function rotationVersusPeer(rows: Row[]): string[] {
  const peer = byName(rows, 'oidc-peer');
  if (!peer) return [];
  const places: Array<[Row['name'], string]> = [
    ['rotation-facade', "ours at {base_url}/oauth/token (the metadata's token_endpoint) through the facade, service mode"],
    ['all-in-one-rotation', 'ours at {base_url}/oauth/token, all-in-one'],
    ['rotation', "ours at auth's own listener, service mode (for reference)"],
  ];
  const lines = places.flatMap(([name, label]) => {
    const row = byName(rows, name);
    if (!row) return [];
    const [ours, theirs] = [instructionsPer(row), instructionsPer(peer)];
    return [
      `Rotation, ${label}: ${thousands(row.perSecond)}/s ÷ node-oidc-provider's ${thousands(peer.perSecond)}/s = ${ratio(row.perSecond / peer.perSecond)}; ` +
        `p99 ${ms(row.p99)} against its ${ms(peer.p99)}` +
        (ours !== undefined && theirs !== undefined
          ? `; ${ours.toFixed(2)} M instructions per rotation in ours against its ${theirs.toFixed(2)} M (${ratio(theirs / ours)}).`
          : '.'),
    ];
  });
  const proxied = byName(rows, 'oidc-peer-proxied');
  if (proxied)
    lines.push(
      `The peer behind a bare Node proxy (the hop alone, nothing of an edge): ${thousands(proxied.perSecond)}/s = ${ratio(proxied.perSecond / peer.perSecond)} itself; ` +
        `the proxy's CPU ${cpuMs(cpuMsPerRequest(proxied, ['proxy']))} per rotation, the peer's ${cpuMs(cpuMsPerRequest(peer, ['oidc-provider']))}.`,
    );
  return lines;
}

/** The read with a DPoP proof per request beside the same read with a bearer token (the proof check must stay cheap). */
export function dpopVersusBearer(rows: Row[]): string[] {
  const [bearer, dpop] = [byName(rows, 'service-rest'), byName(rows, 'service-rest-dpop')];
  if (!bearer || !dpop) return [];
  const [withProof, without] = [cpuMsPerRequest(dpop, ['facade']), cpuMsPerRequest(bearer, ['facade'])];
  return [
    `REST read with DPoP (service mode): ${thousands(dpop.perSecond)} req/s = ${ratio(dpop.perSecond / bearer.perSecond)} the bearer read's ` +
      `${thousands(bearer.perSecond)} req/s; p99 ${ms(dpop.p99)} against ${ms(bearer.p99)}` +
      (withProof !== undefined && without !== undefined
        ? `; facade CPU per request ${withProof.toFixed(2)} ms against ${without.toFixed(2)} ms.`
        : '.'),
  ];
}

/** The REST reads beside the stock chain's, the bars read beside the all-in-one's, and CPU per request beside the stock chain's. */
function readsInWords(rows: Row[]): string[] {
  const lines: string[] = [];
  const [stock, read, bars, hop, rest] = (['stock', 'all-in-one', 'bars', 'gateway', 'service-rest'] as const).map((n) => byName(rows, n));
  const versusStock = (label: string, row?: Row) =>
    row && stock
      ? [
          `${label}: ${thousands(row.perSecond)} req/s = ${ratio(row.perSecond / stock.perSecond)} the stock chain's ${thousands(stock.perSecond)} req/s ` +
            `(target ≥ 1.0×); p99 ${ms(row.p99)} against its ${ms(stock.p99)}.`,
        ]
      : [];
  lines.push(...versusStock('REST, all-in-one (GET /v1/accounts)', read), ...versusStock('REST, service mode (GET /v1/accounts)', rest));
  if (bars && read)
    lines.push(
      `Bars over a week of ticks (100 one-minute bars a page): ${thousands(bars.perSecond)} req/s = ${ratio(bars.perSecond / read.perSecond)} ` +
        `the all-in-one's GET /v1/accounts (${thousands(read.perSecond)} req/s); p99 ${ms(bars.p99)}.`,
    );
  lines.push(...dpopVersusBearer(rows));
  const stockGateway = stock && cpuMsPerRequest(stock, ['gateway']);
  const ours = hop && cpuMsPerRequest(hop, ['gateway']);
  if (stockGateway !== undefined && ours !== undefined) {
    const inRest = rest && cpuMsPerRequest(rest, ['gateway']);
    lines.push(
      `Gateway CPU per request: ours ${ours.toFixed(2)} ms alone` +
        (inRest !== undefined ? ` (${inRest.toFixed(2)} ms in the REST path)` : '') +
        `, the stock gateway ${stockGateway.toFixed(2)} ms: ${ratio(ours / stockGateway)} (target ≤ 1.0×).`,
    );
  }
  const restCpu = rest && cpuMsPerRequest(rest, ['facade', 'gateway', 'accounts']);
  const stockCpu = stock && cpuMsPerRequest(stock, ['gateway', 'subgraph']);
  if (restCpu !== undefined && stockCpu !== undefined)
    lines.push(
      `CPU per REST read across our processes (facade, gateway, accounts): ${restCpu.toFixed(2)} ms; the stock chain: ${stockCpu.toFixed(2)} ms.`,
    );
  return lines;
}

/** Order placement in one run mode (one user's accounts, then many users'), beside pgbench, with its costs per order. */
function ordersInWords(rows: Row[], mode: string, oneUser: Row['name'], spreadName: Row['name'], pgbench: Row | undefined): string[] {
  const [orders, spread] = [byName(rows, oneUser), byName(rows, spreadName)];
  const lines: string[] = [];
  if (orders && pgbench)
    lines.push(
      `Order placement, ${mode}: ${thousands(orders.perSecond)} orders/s ÷ pgbench ${thousands(pgbench.perSecond)} tps on the same server = ${ratio(orders.perSecond / pgbench.perSecond)}` +
        `, p99 ${ms(orders.p99)}` +
        (spread
          ? `; spread over many users' accounts ${thousands(spread.perSecond)} orders/s = ${ratio(spread.perSecond / pgbench.perSecond)}, p99 ${ms(spread.p99)}.`
          : '.') +
        ' (Target ≥ 0.35×, p99 ≤ 120 ms.)',
    );
  const costs = (which: string, row?: Row) => costsInWords(row, `order placed (${mode}, ${which})`, `placing orders (${mode}, ${which})`);
  return [...lines, ...costs('one user', orders), ...costs('spread', spread)];
}

/** Each measured path beside its baseline or target, as one sentence; a path that was not measured is left out. */
export function ratiosInWords(rows: Row[], memory?: Memory): string[] {
  const lines = readsInWords(rows);
  const [rotation, pgbench, market] = [byName(rows, 'rotation'), byName(rows, 'pgbench'), byName(rows, 'market')];
  const settled = 'market order settled';
  if (rotation)
    lines.push(
      `Refresh-token rotation (32 chains, reuse detection on): ${thousands(rotation.perSecond)}/s = ${ratio(rotation.perSecond / ROTATION_TARGET)} ` +
        `the ${thousands(ROTATION_TARGET)}/s target, p99 ${ms(rotation.p99)}.`,
    );
  lines.push(...rotationVersusPeer(rows));
  lines.push(...ordersInWords(rows, 'service mode', 'orders', 'orders-spread', pgbench));
  lines.push(...ordersInWords(rows, 'all-in-one', 'all-in-one-orders', 'all-in-one-orders-spread', pgbench));
  if (market)
    lines.push(
      `Market orders end to end: ${thousands(market.perSecond)} fills settled/s` +
        (pgbench ? ` ÷ pgbench ${thousands(pgbench.perSecond)} tps = ${ratio(market.perSecond / pgbench.perSecond)}` : '') +
        `; placement → applied in banking and accounts p50 ${ms(market.p50)}, p99 ${ms(market.p99)}.`,
      ...costsInWords(market, `${settled} (its event stream and settlement reads included)`, 'settling market orders', settled),
    );
  if (memory)
    lines.push(
      `Memory, all-in-one (${memory.processes.length} processes): ${mb(memory.afterStart)} resident after start ` +
        `(${memory.processes.map((p) => `${p.name} ${mb(p.bytes)}`).join(', ')}), ${mb(memory.peakUnderLoad)} at the peak of the REST load.`,
    );
  return lines;
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
