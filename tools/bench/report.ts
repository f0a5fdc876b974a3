/** The bench's figures as a Markdown table (printed, and pasted into the README) and the ratios against their targets, in words. */
import type { CpuUse, MachineUse } from './proc';
import type { InstructionUse } from './instructions';
import type { PgWaits } from './pg-waits';

/** The measured paths, by the name `--only` takes. */
export const PATHS = [
  'bare',
  'stock',
  'all-in-one',
  'all-in-one-orders',
  'bars',
  'service-rest',
  'gateway',
  'rotation',
  'oidc-peer',
  'orders',
  'market',
] as const;
export type PathName = (typeof PATHS)[number];

/** The refresh rotation rate to reach, per second. */
const ROTATION_TARGET = 1600;

export interface Row {
  name:
    | PathName
    | 'service-rest-dpop'
    | 'all-in-one-rotation'
    | 'rotation-facade'
    | 'oidc-peer-proxied'
    | 'orders-spread'
    | 'all-in-one-orders-spread'
    | 'pgbench';
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
  /** The whole machine in the window (PostgreSQL, Redis and the kernel included); rows measured before it was recorded have none. */
  machine?: MachineUse;
  /** What the run's database backends waited on in the window (the money paths only). */
  waits?: PgWaits;
  /** Instructions retired in the window, by perf where it can count them (the money paths only). */
  instructions?: InstructionUse;
}

export interface Memory {
  /** Summed resident size of the all-in-one's processes after start, and the peak while its REST path was loaded (bytes). */
  afterStart: number;
  peakUnderLoad: number;
  /** Per process after start. */
  processes: { name: string; bytes: number }[];
}

const thousands = (n: number) => Math.round(n).toLocaleString('en-US');
/** autocannon counts latency in whole milliseconds: 0 is an answer within the first one. */
const ms = (n: number | undefined) => (n === undefined ? '—' : n < 1 ? '<1 ms' : n < 10 ? `${n.toFixed(1)} ms` : `${Math.round(n)} ms`);
const mb = (bytes: number) => `${Math.round(bytes / (1024 * 1024))} MB`;

/** Two significant digits below 1 (0.45×), two decimals above (1.25×). */
export const ratio = (value: number | undefined) =>
  value === undefined || !Number.isFinite(value) ? '—' : `${value >= 1 ? value.toFixed(2) : value.toPrecision(2)}×`;

const cpuCell = (cpu: CpuUse[]) => cpu.map((c) => `${c.name} ${Math.round(c.percent)}%`).join(', ') || '—';

/** CPU-seconds per answered request, in ms, of the processes named (all when none are). */
export function cpuMsPerRequest(row: Row, names?: string[]): number | undefined {
  if (!row.total) return undefined;
  const seconds = row.cpu.filter((c) => !names || names.includes(c.name)).reduce((sum, c) => sum + c.seconds, 0);
  return (seconds / row.total) * 1000;
}

const cpuMs = (ms?: number) => (ms === undefined ? 'unknown' : `${ms.toFixed(2)} ms`);

const byName = (rows: Row[], name: Row['name']) => rows.find((r) => r.name === name);

/** The most CPU an order may cost (ms), across every process of ours. */
const ORDER_CPU_TARGET_MS = 2.5;

/**
 * ms of CPU per order (or fill) in each of our processes (CPU% × window ÷ orders; the load
 * generator left out) and their total, against the target: one sentence.
 */
export function cpuPerOrderInWords(label: string, row: Row): string | undefined {
  const ours = row.cpu.filter((c) => c.name !== 'load' && c.name !== 'postgres');
  if (!row.total || !ours.length) return undefined;
  const each = ours.map((c) => `${c.name} ${((c.seconds / row.total) * 1000).toFixed(2)}`);
  const total = cpuMsPerRequest(
    row,
    ours.map((c) => c.name),
  )!;
  const postgres = cpuMsPerRequest(row, ['postgres']);
  const machine = row.machine;
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

/** Our rotation beside node-oidc-provider's (the same 32 chains, Basic auth, form body), one sentence per place it was measured. */
export function rotationVersusPeer(rows: Row[]): string[] {
  const peer = byName(rows, 'oidc-peer');
  if (!peer) return [];
  const places: Array<[Row['name'], string]> = [
    ['rotation-facade', "ours at {base_url}/oauth/token (the metadata's token_endpoint) through the facade, service mode"],
    ['all-in-one-rotation', 'ours at {base_url}/oauth/token, all-in-one'],
    ['rotation', "ours at auth's own listener, service mode (for reference)"],
  ];
  const proxied = byName(rows, 'oidc-peer-proxied');
  const hop = proxied
    ? [
        `The peer behind a bare Node proxy (the hop alone, nothing of an edge): ${thousands(proxied.perSecond)}/s = ${ratio(proxied.perSecond / peer.perSecond)} itself; ` +
          `the proxy's CPU ${cpuMs(cpuMsPerRequest(proxied, ['proxy']))} per rotation, the peer's ${cpuMs(cpuMsPerRequest(peer, ['oidc-provider']))}.`,
      ]
    : [];
  return places
    .flatMap(([name, label]) => {
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
    })
    .concat(hop);
}

/** Markdown, columns padded so it reads as well on a terminal. */
export function formatTable(rows: Row[]): string {
  const stock = byName(rows, 'stock');
  const bare = byName(rows, 'bare');
  const header = ['Path', 'per second', 'p50', 'p99', 'CPU per process (% of one core)', 'vs stock chain', 'vs bare'];
  const cells = rows.map((r) => {
    // Request/answer paths compare with each other; rotations, orders and transactions are other work.
    const comparable = r.unit === 'req/s';
    return [
      r.path,
      `${thousands(r.perSecond)} ${r.unit}`,
      ms(r.p50),
      ms(r.p99),
      cpuCell(r.cpu),
      comparable && stock ? ratio(r.perSecond / stock.perSecond) : '—',
      comparable && bare ? ratio(r.perSecond / bare.perSecond) : '—',
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => `| ${c.map((v, i) => (i === 0 || i === 4 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i === 0 || i === 4 ? `${'-'.repeat(w + 1)}-` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(header), rule, ...cells.map(line)].join('\n');
}

/** Order placement in one run mode (one user's accounts, then many users'), beside pgbench, and its CPU per order. */
function ordersInWords(rows: Row[], mode: string, oneUser: Row['name'], spreadName: Row['name'], pgbench: Row | undefined): string[] {
  const orders = byName(rows, oneUser);
  const spread = byName(rows, spreadName);
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
  for (const [which, row] of [
    [`${mode}, one user`, orders],
    [`${mode}, spread`, spread],
  ] as const) {
    const words = row && cpuPerOrderInWords(`order placed (${which})`, row);
    if (words) lines.push(words);
    const counted = row && instructionsInWords(`order placed (${which})`, row);
    if (counted) lines.push(counted);
    const waits = row && pgWaitsInWords(`placing orders (${which})`, row);
    if (waits) lines.push(waits);
  }
  return lines;
}

/** Millions of instructions our processes (or the peer's) retired per request of `row`, when perf counted them. */
function instructionsPer(row: Row): number | undefined {
  const counted = row.instructions;
  if (!counted || !row.total) return undefined;
  const ours = counted.byName.filter((c) => c.name !== 'load' && c.name !== 'postgres');
  return ours.reduce((sum, c) => sum + c.instructions, 0) / row.total / 1e6;
}

/**
 * Instructions per order (or fill) in each of our processes, in PostgreSQL and in the whole
 * machine, in millions: one sentence. Unlike CPU time they do not move with the hour's speed.
 */
export function instructionsInWords(label: string, row: Row): string | undefined {
  const counted = row.instructions;
  if (!counted || !row.total) return undefined;
  const per = (n: number) => (n / row.total / 1e6).toFixed(2);
  const ours = counted.byName.filter((c) => c.name !== 'load' && c.name !== 'postgres');
  const postgres = counted.byName.find((c) => c.name === 'postgres');
  return (
    `Instructions per ${label} (perf), in millions: ${ours.map((c) => `${c.name} ${per(c.instructions)}`).join(', ')}` +
    ` = ${instructionsPer(row)!.toFixed(2)} in ours` +
    (postgres ? `; PostgreSQL ${per(postgres.instructions)}` : '') +
    `; the machine ${per(counted.machine)}, everything included.`
  );
}

/**
 * What the database's backends waited on while `row` was measured, one sentence: a lock that
 * serialises the path shows as backends waiting on it, a full machine as busy backends that wait
 * on nothing. `LWLock/WALWrite` is a commit waiting for the WAL to reach the disk.
 */
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

/** Each measured path beside its baseline or target, as one sentence; a path that was not measured is left out. */
export function ratiosInWords(rows: Row[], memory?: Memory): string[] {
  const lines = [...readsInWords(rows), ...dpopVersusBearer(rows), ...cpuInWords(rows)];
  const rotation = byName(rows, 'rotation');
  if (rotation)
    lines.push(
      `Refresh-token rotation (32 chains, reuse detection on): ${thousands(rotation.perSecond)}/s = ${ratio(rotation.perSecond / ROTATION_TARGET)} ` +
        `the ${thousands(ROTATION_TARGET)}/s target, p99 ${ms(rotation.p99)}.`,
    );
  lines.push(...rotationVersusPeer(rows));
  const pgbench = byName(rows, 'pgbench');
  lines.push(...ordersInWords(rows, 'service mode', 'orders', 'orders-spread', pgbench));
  lines.push(...ordersInWords(rows, 'all-in-one', 'all-in-one-orders', 'all-in-one-orders-spread', pgbench));
  const market = byName(rows, 'market');
  if (market) lines.push(...marketInWords(market, pgbench));
  if (memory)
    lines.push(
      `Memory, all-in-one (${memory.processes.length} processes): ${mb(memory.afterStart)} resident after start ` +
        `(${memory.processes.map((p) => `${p.name} ${mb(p.bytes)}`).join(', ')}), ${mb(memory.peakUnderLoad)} at the peak of the REST load.`,
    );
  return lines;
}

/** The REST reads beside the stock chain's, and the bars read beside the all-in-one's. */
function readsInWords(rows: Row[]): string[] {
  const stock = byName(rows, 'stock');
  const lines: string[] = [];
  const versusStock = (label: string, row: Row | undefined) => {
    if (!row || !stock) return;
    lines.push(
      `${label}: ${thousands(row.perSecond)} req/s = ${ratio(row.perSecond / stock.perSecond)} the stock chain's ${thousands(stock.perSecond)} req/s ` +
        `(target ≥ 1.0×); p99 ${ms(row.p99)} against its ${ms(stock.p99)}.`,
    );
  };
  versusStock('REST, all-in-one (GET /v1/accounts)', byName(rows, 'all-in-one'));
  versusStock('REST, service mode (GET /v1/accounts)', byName(rows, 'service-rest'));
  const bars = byName(rows, 'bars');
  const read = byName(rows, 'all-in-one');
  if (bars && read)
    lines.push(
      `Bars over a week of ticks (100 one-minute bars a page): ${thousands(bars.perSecond)} req/s = ${ratio(bars.perSecond / read.perSecond)} ` +
        `the all-in-one's GET /v1/accounts (${thousands(read.perSecond)} req/s); p99 ${ms(bars.p99)}.`,
    );
  return lines;
}

/** CPU per request: our gateway beside the stock one, and the whole REST read beside the stock chain. */
function cpuInWords(rows: Row[]): string[] {
  const lines: string[] = [];
  const stock = byName(rows, 'stock');
  const hop = byName(rows, 'gateway');
  const rest = byName(rows, 'service-rest');
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

/** Market orders settled end to end, beside pgbench when it ran, with their CPU, instructions and PostgreSQL waits. */
function marketInWords(market: Row, pgbench: Row | undefined): string[] {
  const lines = [
    `Market orders end to end: ${thousands(market.perSecond)} fills settled/s` +
      (pgbench ? ` ÷ pgbench ${thousands(pgbench.perSecond)} tps = ${ratio(market.perSecond / pgbench.perSecond)}` : '') +
      `; placement → applied in banking and accounts p50 ${ms(market.p50)}, p99 ${ms(market.p99)}.`,
  ];
  const words = cpuPerOrderInWords('market order settled (its event stream and settlement reads included)', market);
  if (words) lines.push(words);
  const counted = instructionsInWords('market order settled', market);
  if (counted) lines.push(counted);
  const waits = pgWaitsInWords('settling market orders', market);
  if (waits) lines.push(waits);
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

/** The read with a DPoP proof per request beside the same read with a bearer token (the proof check must stay cheap). */
export function dpopVersusBearer(rows: Row[]): string[] {
  const bearer = byName(rows, 'service-rest');
  const dpop = byName(rows, 'service-rest-dpop');
  if (!bearer || !dpop) return [];
  const facadeCpu = (row: Row) => cpuMsPerRequest(row, ['facade']);
  const [withProof, without] = [facadeCpu(dpop), facadeCpu(bearer)];
  return [
    `REST read with DPoP (service mode): ${thousands(dpop.perSecond)} req/s = ${ratio(dpop.perSecond / bearer.perSecond)} the bearer read's ` +
      `${thousands(bearer.perSecond)} req/s; p99 ${ms(dpop.p99)} against ${ms(bearer.p99)}` +
      (withProof !== undefined && without !== undefined
        ? `; facade CPU per request ${withProof.toFixed(2)} ms against ${without.toFixed(2)} ms.`
        : '.'),
  ];
}
