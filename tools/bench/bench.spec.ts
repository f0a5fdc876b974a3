import { calculateJwkThumbprint, type JWK } from 'jose';
import { DpopVerifier } from '@trading/auth';
import { MemoryStore } from '@trading/redis';
import { newDpopKey, proofSigner } from './dpop';
import { percentile } from './load';
import { parseSseBlocks } from './market-load';
import { parsePgbench } from './pgbench';
import { cpuTicksOf, machineTicksOf, rssBytesOf, startCpuWindow } from './proc';
import { formatTable, parseOnly, PATHS, ratiosInWords, type Memory, type Row, type RowName } from './report';

describe('/proc readings', () => {
  it('reads utime + stime after a command name with spaces and parentheses, VmRSS in bytes, the machine busy but for idle and iowait', () => {
    expect(cpuTicksOf('42 (node (w) 1) S 1 42 42 0 -1 4194560 1200 0 0 0 731 129 0')).toBe(731 + 129);
    expect(rssBytesOf('Name:\tnode\nVmPeak:\t  900 kB\nVmRSS:\t  204800 kB\n')).toBe(204800 * 1024);
    expect(machineTicksOf('cpu  100 5 50 800 20 3 2 0 0 0\ncpu0 1 2 3 4 5 6 7 8')).toEqual({ busy: 160, total: 980 });
  });

  it.each([
    [() => cpuTicksOf('nonsense'), /not a \/proc\/<pid>\/stat line/],
    [() => rssBytesOf('Name:\tnode\n'), /no VmRSS/],
    [() => machineTicksOf('intr 1 2 3'), /not a \/proc\/stat cpu line/],
  ])('refuses a line it cannot read (%#)', (read, error) => expect(read).toThrow(error));

  it("measures a busy process's share of a core over the window, and one gone before it as nothing", () => {
    const window = startCpuWindow([
      { name: 'this', pid: process.pid },
      { name: 'gone', pid: 4_194_000 },
    ]);
    for (let end = Date.now() + 400, x = 0; Date.now() < end; ) x += Math.sqrt(x + 1);
    const { cpu, machine } = window.finish();
    expect(cpu.map((c) => c.name)).toEqual(['this', 'gone']);
    expect(cpu[0]!.percent).toBeGreaterThan(20); // one core busy, on a machine that may be shared
    expect(cpu[0]!.percent).toBeLessThan(150);
    expect(cpu[1]).toEqual({ name: 'gone', percent: 0, seconds: 0 });
    expect(machine.seconds).toBeGreaterThanOrEqual(cpu[0]!.seconds - 0.02);
  });
});

describe('parsing', () => {
  it('reads pgbench 15, and the older two-line form by the tps that leaves out connecting; says so without a tps line', () => {
    const v15 =
      'number of transactions actually processed: 21370\nlatency average = 3.744 ms\ntps = 2136.871234 (without initial connection time)\n';
    expect(parsePgbench(v15)).toEqual({ tps: 2136.871234, latencyMs: 3.744, transactions: 21370 });
    expect(parsePgbench('tps = 1500.1 (including connections establishing)\ntps = 1510.2 (excluding connections establishing)\n').tps).toBe(
      1510.2,
    );
    expect(() => parsePgbench('FATAL: database "x" does not exist')).toThrow(/no "tps = …" line/);
  });

  it('takes the nearest-rank percentile', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect([50, 99, 100].map((p) => percentile(values, p))).toEqual([50, 99, 100]);
    expect([percentile([7], 99), percentile([], 50)]).toEqual([7, 0]);
  });

  it('reads whole Server-Sent Events blocks and keeps the unfinished one', () => {
    const { events, rest } = parseSseBlocks('retry: 3000\n\nid: 1-0\nevent: order\ndata: {"id":"a"}\n\n: heartbeat\n\nid: 2-0\nevent: fi');
    expect(events).toEqual([{ event: 'order', data: '{"id":"a"}' }]);
    expect(rest).toBe('id: 2-0\nevent: fi');
  });

  it.each([
    ['', PATHS],
    ['--only oidc-peer,market', ['oidc-peer', 'market']],
    ['--only=orders', ['orders']],
  ])('takes the paths to run from "%s"', (args, paths) => expect([...parseOnly(args.split(' ').filter(Boolean))]).toEqual([...paths]));

  it.each([
    ['--only bare,nope', /unknown path nope/],
    ['--only', /needs a list/],
  ])('refuses "%s"', (args, error) => expect(() => parseOnly(args.split(' '))).toThrow(error));
});

/** A 10 s window's row: `cpu` in CPU-seconds per process. */
const row = (name: RowName, perSecond: number, more: Partial<Row> & { seconds?: Record<string, number> } = {}): Row => {
  const { seconds = {}, ...rest } = more;
  const cpu = Object.entries(seconds).map(([process, s]) => ({ name: process, seconds: s, percent: s * 10 }));
  return { name, path: name, unit: 'req/s', perSecond, total: perSecond * 10, errors: 0, cpu, ...rest };
};

describe('report', () => {
  it('prints a Markdown table, the request/answer rows beside the stock chain and the bare server', () => {
    const table = formatTable([
      row('bare', 20000, { p50: 0, p99: 8, seconds: { server: 9.96 } }),
      row('stock', 1000, { p50: 23, p99: 66, seconds: { gateway: 10, subgraph: 3, load: 0.9 } }),
      row('rotation', 800, { unit: 'rotations/s', p50: 30, p99: 90 }),
      row('pgbench', 2000, { unit: 'tps' }),
    ]).split('\n');
    expect(table[0]).toMatch(
      /^\| Path +\| +per second \| +p50 \| +p99 \| CPU per process \(% of one core\) +\| vs stock chain \| vs bare \|$/,
    );
    expect(table[1]).toMatch(/^\|-+\|-+:\|/);
    expect(table[2]).toMatch(/^\| bare +\| +20,000 req\/s \| +<1 ms \| +8\.0 ms \| server 100% +\| +20\.00× \| +1\.00× \|$/);
    expect(table[3]).toMatch(/\| gateway 100%, subgraph 30%, load 9% \| +1\.00× \| +0\.050× \|$/);
    expect(table[4]).toMatch(/800 rotations\/s \| +30 ms \| +90 ms \| — +\| +— \| +— \|$/);
    expect(table[5]).toMatch(/2,000 tps \| +— \| +— \| — +\| +— \| +— \|$/);
    // Every line as wide as the header: it reads as a table on a terminal too.
    expect(new Set(table.map((l) => l.length)).size).toBe(1);
  });

  const memory: Memory = {
    afterStart: 700 * 1048576,
    peakUnderLoad: 800 * 1048576,
    processes: [{ name: 'primary', bytes: 700 * 1048576 }],
  };
  it.each<[string, Row[], Memory | undefined, string[]]>([
    [
      'the reads beside the stock chain, the bars read beside the all-in-one, DPoP beside bearer, CPU per request',
      [
        row('stock', 1000, { p99: 66, seconds: { gateway: 10, subgraph: 3, load: 0.9 } }),
        row('all-in-one', 1500, { p99: 20 }),
        row('bars', 300, { p99: 45 }),
        row('service-rest', 900, { p99: 50, seconds: { facade: 4.5, gateway: 2.7, accounts: 1.8 } }),
        row('service-rest-dpop', 600, { p99: 70, seconds: { facade: 4.2 } }),
        row('gateway', 800, { seconds: { gateway: 9.2, accounts: 5 } }),
      ],
      undefined,
      [
        "REST, all-in-one (GET /v1/accounts): 1,500 req/s = 1.50× the stock chain's 1,000 req/s (target ≥ 1.0×); p99 20 ms against its 66 ms.",
        "REST, service mode (GET /v1/accounts): 900 req/s = 0.90× the stock chain's 1,000 req/s (target ≥ 1.0×); p99 50 ms against its 66 ms.",
        "Bars over a week of ticks (100 one-minute bars a page): 300 req/s = 0.20× the all-in-one's GET /v1/accounts (1,500 req/s); p99 45 ms.",
        "REST read with DPoP (service mode): 600 req/s = 0.67× the bearer read's 900 req/s; p99 70 ms against 50 ms; facade CPU per request 0.70 ms against 0.50 ms.",
        'Gateway CPU per request: ours 1.15 ms alone (0.30 ms in the REST path), the stock gateway 1.00 ms: 1.15× (target ≤ 1.0×).',
        'CPU per REST read across our processes (facade, gateway, accounts): 1.00 ms; the stock chain: 1.30 ms.',
      ],
    ],
    [
      'rotation against its target and beside node-oidc-provider, alone, behind a bare proxy and behind the same HAProxy',
      [
        row('rotation', 1200, { unit: 'rotations/s', p99: 40 }),
        row('oidc-peer', 2000, { unit: 'rotations/s', p99: 20, seconds: { 'oidc-provider': 8 } }),
        row('rotation-facade', 800, { unit: 'rotations/s', p99: 60 }),
        row('all-in-one-rotation', 1000, { unit: 'rotations/s', p99: 45 }),
        row('oidc-peer-proxied', 1200, { unit: 'rotations/s', seconds: { proxy: 3, 'oidc-provider': 6 } }),
        row('oidc-peer-cluster', 2500, { unit: 'rotations/s', p99: 30 }),
        row('rotation-ingress', 1500, { unit: 'rotations/s', p99: 25, seconds: { haproxy: 3, auth: 12, facade: 0, load: 1 } }),
        row('oidc-peer-ingress', 1000, { unit: 'rotations/s', p99: 35, seconds: { haproxy: 2, 'oidc-provider': 5, load: 1 } }),
      ],
      undefined,
      [
        'Refresh-token rotation (32 chains, reuse detection on): 1,200/s = 0.75× the 1,600/s target, p99 40 ms.',
        "Rotation, ours at {base_url}/oauth/token (the metadata's token_endpoint) through the facade, service mode: 800/s ÷ node-oidc-provider's 2,000/s = 0.40×; p99 60 ms against its 20 ms.",
        "Rotation, ours at {base_url}/oauth/token, all-in-one: 1,000/s ÷ node-oidc-provider's 2,000/s = 0.50×; p99 45 ms against its 20 ms.",
        "Rotation, ours at auth's own listener, service mode (for reference): 1,200/s ÷ node-oidc-provider's 2,000/s = 0.60×; p99 40 ms against its 20 ms.",
        "Rotation, all-in-one beside the peer run the same way (two processes of Node's cluster): 1,000/s ÷ 2,500/s = 0.40× (target ≥ 1.2×: not met); p99 45 ms against its 30 ms.",
        "Rotation, service mode as deployed, both behind the same HAProxy ({base_url}/oauth/* routed straight to auth): 1,500/s ÷ the peer's 1,000/s = 1.50× (target ≥ 1.2×: met); p99 25 ms against its 35 ms; CPU per rotation: ours haproxy 0.20, auth 0.80, facade 0.00 ms, the peer's haproxy 0.20, oidc-provider 0.50 ms.",
        "The peer behind a bare Node proxy (the hop alone, nothing of an edge): 1,200/s = 0.60× itself; the proxy's CPU 0.25 ms per rotation, the peer's 0.40 ms.",
      ],
    ],
    [
      'orders and fills beside pgbench, CPU per order without the load generator, PostgreSQL and the machine beside ours, memory',
      [
        row('pgbench', 2000, { unit: 'tps' }),
        row('orders', 100, {
          p99: 900,
          seconds: { facade: 1.5, oms: 4, load: 0.3, postgres: 3 },
          machine: { percent: 190, cores: 2, seconds: 19 },
        }),
        row('orders-spread', 120, { p99: 800 }),
        row('all-in-one-orders', 800, { p99: 110, seconds: { 'worker 1': 8, 'worker 2': 8 } }),
        row('all-in-one-orders-single', 200, { p50: 4.2, p99: 9 }),
        row('all-in-one-orders-burst', 50, {
          p50: 20,
          p99: 80,
          seconds: { 'worker 1': 0.5, postgres: 0.4 },
          machine: { percent: 20, cores: 2, seconds: 1.5 },
        }),
        row('market', 50, { unit: 'fills/s', p50: 300, p99: 700 }),
      ],
      memory,
      [
        "Order placement, service mode: 100 orders/s ÷ pgbench 2,000 tps on the same server = 0.050×, p99 900 ms; spread over many users' accounts 120 orders/s = 0.060×, p99 800 ms. (Target ≥ 0.35×, p99 ≤ 120 ms.)",
        'CPU per order placed (service mode, one user): facade 1.50, oms 4.00 ms = 5.50 ms in all; PostgreSQL 3.00 ms; ' +
          'the machine was 190% busy of 200% (19.00 ms per order placed, everything included) (target ≤ 2.5 ms of the machine: not met).',
        'Order placement, all-in-one: 800 orders/s ÷ pgbench 2,000 tps on the same server = 0.40×, p99 110 ms. (Target ≥ 0.35×, p99 ≤ 120 ms.)',
        'CPU per order placed (all-in-one, one user): worker 1 1.00, worker 2 1.00 ms = 2.00 ms in all (target ≤ 2.5 ms: met).',
        'One order at a time, all-in-one: p50 4.2 ms, p99 9.0 ms (target p50 ≤ 5 ms: met).',
        '50 orders arriving together each second, all-in-one: p50 20 ms, p99 80 ms (target p99 ≤ 50 ms: not met).',
        'CPU per order placed (all-in-one, 50 a second): worker 1 1.00 ms = 1.00 ms in all; PostgreSQL 0.80 ms; ' +
          'the machine was 20% busy of 200% (3.00 ms per order placed, everything included) (target ≤ 2.5 ms of the machine: not met).',
        'Market orders end to end: 50 fills settled/s ÷ pgbench 2,000 tps = 0.025×; placement → applied in banking and accounts p50 300 ms, p99 700 ms.',
        'Memory, all-in-one (1 processes): 700 MB resident after start (primary 700 MB), 800 MB at the peak of the REST load.',
      ],
    ],
    [
      'webhook deliveries beside plain posting at the same concurrency, order placement with endpoints beside without',
      [
        row('webhooks', 250, { unit: 'deliveries/s', seconds: { 'worker 1': 2.5, receiver: 0.5, postgres: 4 } }),
        row('webhook-posts', 5000, { unit: 'deliveries/s', seconds: { receiver: 5, load: 10 } }),
        row('webhooks-fanout', 500, { unit: 'deliveries/s', seconds: { 'worker 1': 5 } }),
        row('webhook-posts-fanout', 8000, { unit: 'deliveries/s', seconds: { load: 8 } }),
        row('webhooks-orders', 400, { p50: 100, p99: 200, seconds: { 'worker 1': 4, receiver: 1, postgres: 8 } }),
        row('webhooks-orders-fanout', 300, { p50: 150, p99: 400, seconds: { 'worker 1': 6, receiver: 3 } }),
      ],
      undefined,
      [
        'Webhook deliveries, 1 endpoint, one at a time: 250/s = 0.050× a plain undici loop posting the same signed bodies (5,000/s); ' +
          'CPU per delivery worker 1 1.00, receiver 0.20, postgres 1.60 ms, per plain post receiver 0.10, load 0.20 ms.',
        'Webhook deliveries, 10 endpoints side by side: 500/s = 0.063× a plain undici loop posting the same signed bodies (8,000/s); ' +
          'CPU per delivery worker 1 1.00 ms, per plain post load 0.10 ms.',
        'Order placement with webhooks (all-in-one): 10 endpoints 300 orders/s = 0.75× none (400 orders/s); p50 150 ms against 100 ms, p99 400 ms against 200 ms.',
        // The receiver stands for the vendor: not ours.
        'CPU per order placed (no webhook endpoint): worker 1 1.00 ms = 1.00 ms in all; PostgreSQL 2.00 ms (target ≤ 2.5 ms: met).',
        'CPU per order placed (10 webhook endpoints): worker 1 2.00 ms = 2.00 ms in all (target ≤ 2.5 ms: met).',
      ],
    ],
    [
      'nothing where a row has no baseline measured beside it',
      [row('rotation-facade', 800), row('bars', 300), row('orders', 100)],
      undefined,
      [],
    ],
  ])('states in words %s', (_, rows, measuredMemory, words) => expect(ratiosInWords(rows, measuredMemory)).toEqual(words));
});

describe('DPoP in the bench', () => {
  it("signs proofs the platform's own verifier accepts, each with its own jti", async () => {
    const key = newDpopKey();
    const proof = proofSigner(key);
    const verifier = new DpopVerifier(new MemoryStore());
    const jkt = await calculateJwkThumbprint(key.publicJwk as JWK, 'sha256');
    const url = 'http://127.0.0.1:8080/v1/accounts';
    const [one, two] = [proof('GET', url, 'the-token'), proof('GET', url, 'the-token')];
    expect(one).not.toBe(two);
    for (const p of [one, two])
      await expect(verifier.verify({ proof: p, method: 'GET', urls: [url], accessToken: 'the-token', jkt })).resolves.toBeTruthy();
    await expect(verifier.verify({ proof: one, method: 'GET', urls: [url], accessToken: 'the-token', jkt })).rejects.toThrow(); // replayed
  });
});
