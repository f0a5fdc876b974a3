import { readCpuTicks, readRssBytes, cpuPercent, cpuTicksOf, machineTicksOf, rssBytesOf } from './proc';
import { parsePgbench } from './pgbench';
import { percentile } from './load';
import { parseSseBlocks } from './market-load';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { DpopVerifier } from '@trading/auth';
import { MemoryStore } from '@trading/redis';
import { newDpopKey, proofSigner } from './dpop';
import {
  cpuMsPerRequest,
  dpopVersusBearer,
  cpuPerOrderInWords,
  formatTable,
  instructionsInWords,
  parseOnly,
  PATHS,
  ratio,
  ratiosInWords,
  pgWaitsInWords,
  rotationVersusPeer,
  type Row,
} from './report';
import { Client } from 'pg';
import { createTestDatabases, TEST_POSTGRES_URL } from '@trading/testing';
import { startPgWaits } from './pg-waits';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { instructionsIn, startInstructionCount } from './instructions';

describe('/proc readings', () => {
  it('takes utime + stime after the command name, even one with spaces and parentheses', () => {
    const stat = '4242 (node (worker) 1) S 1 4242 4242 0 -1 4194560 1200 0 0 0 731 129 0 0 20 0 11 0 5000 1100000000 70000';
    expect(cpuTicksOf(stat)).toBe(731 + 129);
  });

  it('refuses a line that is not a stat line', () => {
    expect(() => cpuTicksOf('nonsense')).toThrow(/not a \/proc/);
  });

  it('reads VmRSS in bytes', () => {
    expect(rssBytesOf('Name:\tnode\nVmPeak:\t  900 kB\nVmRSS:\t  204800 kB\nThreads:\t11\n')).toBe(204800 * 1024);
    expect(() => rssBytesOf('Name:\tnode\n')).toThrow(/VmRSS/);
  });

  it('turns ticks over a window into a share of one core', () => {
    expect(cpuPercent(150, 10, 100)).toBeCloseTo(15);
    expect(cpuPercent(2000, 10, 100)).toBeCloseTo(200);
    expect(cpuPercent(5, 0, 100)).toBe(0);
  });

  it('reads this very process', () => {
    expect(readCpuTicks(process.pid)).toBeGreaterThan(0);
    expect(readRssBytes(process.pid)).toBeGreaterThan(1024 * 1024);
  });
});

describe('pgbench output', () => {
  it('reads pgbench 15', () => {
    const out = [
      'transaction type: <builtin: TPC-B (sort of)>',
      'scaling factor: 1',
      'number of clients: 8',
      'number of threads: 2',
      'duration: 10 s',
      'number of transactions actually processed: 21370',
      'number of failed transactions: 0 (0.000%)',
      'latency average = 3.744 ms',
      'initial connection time = 10.512 ms',
      'tps = 2136.871234 (without initial connection time)',
    ].join('\n');
    expect(parsePgbench(out)).toEqual({ tps: 2136.871234, latencyMs: 3.744, transactions: 21370 });
  });

  it('reads the older two-line form by the tps that leaves out connecting', () => {
    const out = 'tps = 1500.1 (including connections establishing)\ntps = 1510.2 (excluding connections establishing)\n';
    expect(parsePgbench(out).tps).toBe(1510.2);
  });

  it('says so when there is no tps line', () => {
    expect(() => parsePgbench('FATAL: database "x" does not exist')).toThrow(/no "tps = …" line/);
  });
});

describe('percentile', () => {
  const values = Array.from({ length: 100 }, (_, i) => i + 1);
  it('is the nearest rank', () => {
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 99)).toBe(99);
    expect(percentile(values, 100)).toBe(100);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBe(0);
  });
});

const row = (over: Partial<Row> & Pick<Row, 'name' | 'path' | 'perSecond'>): Row => ({
  unit: 'req/s',
  total: over.perSecond * 10,
  errors: 0,
  cpu: [],
  ...over,
});

describe('report', () => {
  const rows: Row[] = [
    row({ name: 'bare', path: 'bare', perSecond: 20000, p50: 0, p99: 8, cpu: [{ name: 'server', percent: 99.6, seconds: 9.96 }] }),
    row({
      name: 'stock',
      path: 'stock chain',
      perSecond: 1000,
      p50: 23,
      p99: 66,
      cpu: [
        { name: 'gateway', percent: 100, seconds: 10 },
        { name: 'subgraph', percent: 30, seconds: 3 },
        { name: 'load', percent: 9, seconds: 0.9 },
      ],
    }),
    row({
      name: 'gateway',
      path: 'our gateway',
      perSecond: 800,
      p50: 56,
      p99: 117,
      cpu: [
        { name: 'gateway', percent: 92, seconds: 9.2 },
        { name: 'accounts', percent: 50, seconds: 5 },
      ],
    }),
    row({ name: 'rotation', path: 'rotation', unit: 'rotations/s', perSecond: 800, p50: 30, p99: 90 }),
    row({ name: 'orders', path: 'orders', unit: 'orders/s', perSecond: 100, p50: 400, p99: 900 }),
    row({ name: 'pgbench', path: 'pgbench', unit: 'tps', perSecond: 2000 }),
  ];

  it('prints a Markdown table with the ratios of request/answer paths', () => {
    const table = formatTable(rows).split('\n');
    expect(table[0]).toMatch(/^\| Path +\| +per second \|/);
    expect(table[1]).toMatch(/^\|-+\|-+:\|/);
    expect(table[2]).toMatch(/\| +20,000 req\/s \| +<1 ms \| +8\.0 ms \| server 100% +\| +20\.00× \| +1\.00× \|$/);
    expect(table[3]).toContain('gateway 100%, subgraph 30%, load 9%');
    expect(table[4]).toMatch(/\| +0\.80× \| +0\.040× \|$/);
    expect(table[5]).toMatch(/800 rotations\/s \| +30 ms \| +90 ms \| — +\| +— \| +— \|$/);
    expect(table[7]).toMatch(/2,000 tps \| +— \| +— \| — +\| +— \| +— \|$/);
    // Every line as wide as the header: it reads as a table on a terminal too.
    expect(new Set(table.map((l) => l.length)).size).toBe(1);
  });

  it('states the targets in words', () => {
    const words = ratiosInWords(rows, {
      afterStart: 700 * 1048576,
      peakUnderLoad: 800 * 1048576,
      processes: [{ name: 'primary', bytes: 700 * 1048576 }],
    });
    expect(words).toEqual([
      'Gateway CPU per request: ours 1.15 ms alone, the stock gateway 1.00 ms: 1.15× (target ≤ 1.0×).',
      'Refresh-token rotation (32 chains, reuse detection on): 800/s = 0.50× the 1,600/s target, p99 90 ms.',
      'Order placement, service mode: 100 orders/s ÷ pgbench 2,000 tps on the same server = 0.050×, p99 900 ms. (Target ≥ 0.35×, p99 ≤ 120 ms.)',
      'Memory, all-in-one (1 processes): 700 MB resident after start (primary 700 MB), 800 MB at the peak of the REST load.',
    ]);
  });

  it('states order placement in each run mode beside pgbench', () => {
    const allInOne = row({ name: 'all-in-one-orders', path: 'aio orders', unit: 'orders/s', perSecond: 800, p50: 50, p99: 110 });
    const spread = row({ name: 'all-in-one-orders-spread', path: 'aio spread', unit: 'orders/s', perSecond: 700, p50: 60, p99: 130 });
    const words = ratiosInWords([...rows, allInOne, spread]);
    expect(words).toContain(
      'Order placement, all-in-one: 800 orders/s ÷ pgbench 2,000 tps on the same server = 0.40×, p99 110 ms; ' +
        "spread over many users' accounts 700 orders/s = 0.35×, p99 130 ms. (Target ≥ 0.35×, p99 ≤ 120 ms.)",
    );
    expect(words.filter((w) => w.startsWith('Order placement'))).toHaveLength(2);
  });

  it('counts CPU per request over the named processes', () => {
    expect(cpuMsPerRequest(rows[1]!, ['gateway', 'subgraph'])).toBeCloseTo(1.3);
    expect(cpuMsPerRequest(rows[1]!)).toBeCloseTo(1.39);
  });

  it('writes ratios with two significant digits below one', () => {
    expect(ratio(0.4512)).toBe('0.45×');
    expect(ratio(1.2549)).toBe('1.25×');
    expect(ratio(undefined)).toBe('—');
  });

  it('parses --only', () => {
    expect(parseOnly([]).size).toBe(PATHS.length);
    expect([...parseOnly(['--only', 'oidc-peer,market'])]).toEqual(['oidc-peer', 'market']);
    expect([...parseOnly(['--only', 'bare,stock'])]).toEqual(['bare', 'stock']);
    expect([...parseOnly(['--only=orders'])]).toEqual(['orders']);
    expect(() => parseOnly(['--only', 'bare,nope'])).toThrow(/unknown path nope/);
  });
});

describe('comparisons with the peers, in words', () => {
  const rotations: Row[] = [
    row({ name: 'oidc-peer', path: 'peer', unit: 'rotations/s', perSecond: 2000, p99: 20 }),
    row({ name: 'rotation-facade', path: 'facade', unit: 'rotations/s', perSecond: 800, p99: 60 }),
    row({ name: 'all-in-one-rotation', path: 'aio', unit: 'rotations/s', perSecond: 1000, p99: 45 }),
    row({ name: 'rotation', path: 'auth', unit: 'rotations/s', perSecond: 1200, p99: 40 }),
  ];

  it('sets our rotation beside node-oidc-provider in each mode', () => {
    expect(rotationVersusPeer(rotations)).toEqual([
      "Rotation, ours at {base_url}/oauth/token (the metadata's token_endpoint) through the facade, service mode: 800/s ÷ node-oidc-provider's 2,000/s = 0.40×; p99 60 ms against its 20 ms.",
      "Rotation, ours at {base_url}/oauth/token, all-in-one: 1,000/s ÷ node-oidc-provider's 2,000/s = 0.50×; p99 45 ms against its 20 ms.",
      "Rotation, ours at auth's own listener, service mode (for reference): 1,200/s ÷ node-oidc-provider's 2,000/s = 0.60×; p99 40 ms against its 20 ms.",
    ]);
    expect(rotationVersusPeer(rotations.slice(1))).toEqual([]);
  });

  it('says what a bare proxy hop costs the peer, beside the peer alone', () => {
    const cpu = (name: string, seconds: number) => ({ name, seconds, percent: seconds * 10 });
    const peer = { ...rotations[0]!, total: 20_000, cpu: [cpu('oidc-provider', 8), cpu('load', 2)] };
    const proxied = row({
      name: 'oidc-peer-proxied',
      path: 'proxied',
      unit: 'rotations/s',
      perSecond: 1200,
      total: 12_000,
      cpu: [cpu('proxy', 3), cpu('oidc-provider', 6)],
    });
    expect(rotationVersusPeer([peer, proxied, rotations[3]!])).toEqual([
      "Rotation, ours at auth's own listener, service mode (for reference): 1,200/s ÷ node-oidc-provider's 2,000/s = 0.60×; p99 40 ms against its 20 ms.",
      "The peer behind a bare Node proxy (the hop alone, nothing of an edge): 1,200/s = 0.60× itself; the proxy's CPU 0.25 ms per rotation, the peer's 0.40 ms.",
    ]);
  });

  it('sets instructions per rotation beside the peer where perf counted both', () => {
    const counted = (perSecond: number, byName: Array<{ name: string; instructions: number }>) => ({
      perSecond,
      total: perSecond * 10,
      instructions: { machine: 1e12, byName },
    });
    const [peer, facade] = [
      {
        ...rotations[0]!,
        ...counted(2000, [
          { name: 'oidc-provider', instructions: 20e9 },
          { name: 'load', instructions: 9e9 },
        ]),
      },
      {
        ...rotations[1]!,
        ...counted(800, [
          { name: 'facade', instructions: 8e9 },
          { name: 'auth', instructions: 12e9 },
          { name: 'postgres', instructions: 4e9 },
        ]),
      },
    ];
    expect(rotationVersusPeer([peer, facade])).toEqual([
      "Rotation, ours at {base_url}/oauth/token (the metadata's token_endpoint) through the facade, service mode: 800/s ÷ node-oidc-provider's 2,000/s = 0.40×; " +
        'p99 60 ms against its 20 ms; 2.50 M instructions per rotation in ours against its 1.00 M (0.40×).',
    ]);
    // Without the peer's count there is nothing to set beside ours.
    expect(rotationVersusPeer([rotations[0]!, facade])[0]).toMatch(/against its 20 ms\.$/);
  });

  it('states CPU per order per process, the load generator left out', () => {
    const orders = row({
      name: 'orders',
      path: 'orders',
      unit: 'orders/s',
      perSecond: 100,
      total: 1000,
      cpu: [
        { name: 'facade', percent: 15, seconds: 1.5 },
        { name: 'oms', percent: 40, seconds: 4 },
        { name: 'load', percent: 3, seconds: 0.3 },
      ],
    });
    expect(cpuPerOrderInWords('order placed', orders)).toBe(
      'CPU per order placed: facade 1.50, oms 4.00 ms = 5.50 ms in all (target ≤ 2.5 ms: not met).',
    );
    expect(cpuPerOrderInWords('order placed', { ...orders, total: 4000 })).toMatch(/= 1\.38 ms in all \(target ≤ 2\.5 ms: met\)\.$/);
    expect(cpuPerOrderInWords('order placed', { ...orders, total: 0 })).toBeUndefined();
    // PostgreSQL and the whole machine are stated beside ours, not counted in it.
    const withServer = {
      ...orders,
      cpu: [...orders.cpu, { name: 'postgres', percent: 30, seconds: 3 }],
      machine: { percent: 190, cores: 2, seconds: 19 },
    };
    expect(cpuPerOrderInWords('order placed', withServer)).toBe(
      'CPU per order placed: facade 1.50, oms 4.00 ms = 5.50 ms in all (target ≤ 2.5 ms: not met); PostgreSQL 3.00 ms; ' +
        'the machine was 190% busy of 200% (19.00 ms per order placed, everything included).',
    );
  });

  it('states instructions per order per process, PostgreSQL and the machine beside ours', () => {
    const orders = row({
      name: 'orders',
      path: 'orders',
      unit: 'orders/s',
      perSecond: 100,
      total: 1000,
      instructions: {
        machine: 20e9,
        byName: [
          { name: 'facade', instructions: 3e9 },
          { name: 'oms', instructions: 4.5e9 },
          { name: 'load', instructions: 1e9 },
          { name: 'postgres', instructions: 6e9 },
        ],
      },
    });
    expect(instructionsInWords('order placed', orders)).toBe(
      'Instructions per order placed (perf), in millions: facade 3.00, oms 4.50 = 7.50 in ours; PostgreSQL 6.00; the machine 20.00, everything included.',
    );
    expect(instructionsInWords('order placed', { ...orders, instructions: undefined })).toBeUndefined();
  });

  it("reads perf's CSV count, and nothing where it could not count", () => {
    expect(instructionsIn('# started on Fri Nov 27 12:14:49 2026\n\n610205590,,instructions,591209378,100.00,,\n')).toBe(610205590);
    expect(instructionsIn('1200,,instructions:u,1000,100.00,,')).toBe(1200);
    expect(instructionsIn('<not supported>,,instructions,0,100.00,,')).toBeNull();
    expect(instructionsIn('<not counted>,,instructions,0,100.00,,')).toBeNull();
    expect(instructionsIn('Problems finding threads of monitor')).toBeNull();
  });

  /** Counts for this process and a pid no process has, over a busy 300 ms. */
  async function countBusyWindow() {
    const counting = startInstructionCount([
      { name: 'this', pid: process.pid },
      { name: 'gone', pid: 4_194_000 },
    ]);
    await new Promise((r) => setTimeout(r, 300)); // perf attaches
    let x = 0;
    for (const end = Date.now() + 300; Date.now() < end; ) x += Math.sqrt(x + 1);
    expect(x).toBeGreaterThan(0);
    return counting.finish();
  }

  it('without perf at all, the count is left out (never zero) and its files are removed', async () => {
    const [path, tmp] = [process.env['PATH'], process.env['TMPDIR']];
    const scratch = mkdtempSync(join(tmpdir(), 'bench-spec-'));
    process.env['PATH'] = scratch; // no perf to spawn
    process.env['TMPDIR'] = scratch;
    try {
      await expect(countBusyWindow()).resolves.toBeUndefined();
      expect(readdirSync(scratch)).toEqual([]);
    } finally {
      process.env['PATH'] = path;
      if (tmp === undefined) delete process.env['TMPDIR'];
      else process.env['TMPDIR'] = tmp;
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  // Whether this machine's CPU counters are open to perf (a VM often has none): each case is checked where it holds.
  const canCount =
    instructionsIn(spawnSync('perf', ['stat', '-x', ',', '-e', 'instructions', 'true'], { encoding: 'utf8' }).stderr ?? '') !== null;
  if (canCount)
    it('with hardware counters (this machine has them): counts the instructions of a busy process, and leaves out a process perf cannot follow', async () => {
      const counted = await countBusyWindow();
      const mine = counted?.byName.find((c) => c.name === 'this')?.instructions ?? 0;
      expect(mine).toBeGreaterThan(1e7);
      expect(counted!.machine).toBeGreaterThanOrEqual(mine);
      expect(counted!.byName.map((c) => c.name)).toEqual(['this']);
    });
  else
    it('without hardware counters (this machine has none, so counting itself is not checked here): the count is left out, never zero', async () => {
      await expect(countBusyWindow()).resolves.toBeUndefined();
    });

  it("reads the machine's busy share from /proc/stat (idle and iowait are not busy)", () => {
    expect(machineTicksOf('cpu  100 5 50 800 20 3 2 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n')).toEqual({ busy: 160, total: 980 });
    expect(() => machineTicksOf('intr 1 2 3')).toThrow(/not a \/proc\/stat cpu line/);
  });

  it('puts market fills beside pgbench', () => {
    const words = ratiosInWords([
      row({ name: 'market', path: 'market', unit: 'fills/s', perSecond: 50, p50: 300, p99: 700, total: 500 }),
      row({ name: 'pgbench', path: 'pgbench', unit: 'tps', perSecond: 2000 }),
    ]);
    expect(words).toEqual([
      'Market orders end to end: 50 fills settled/s ÷ pgbench 2,000 tps = 0.025×; placement → applied in banking and accounts p50 300 ms, p99 700 ms.',
    ]);
  });
});

describe('Server-Sent Events', () => {
  it('reads whole blocks and keeps the unfinished one', () => {
    const { events, rest } = parseSseBlocks('retry: 3000\n\nid: 1-0\nevent: order\ndata: {"id":"a"}\n\n: heartbeat\n\nid: 2-0\nevent: fi');
    expect(events).toEqual([{ event: 'order', data: '{"id":"a"}' }]);
    expect(rest).toBe('id: 2-0\nevent: fi');
  });
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

  it('puts the DPoP read beside the bearer one', () => {
    const cpu = (facade: number) => [{ name: 'facade', percent: facade, seconds: facade / 10 }];
    const words = dpopVersusBearer([
      row({ name: 'service-rest', path: 'bearer', perSecond: 1000, p99: 50, cpu: cpu(60) }),
      row({ name: 'service-rest-dpop', path: 'dpop', perSecond: 900, p99: 55, cpu: cpu(63) }),
    ]);
    expect(words).toEqual([
      expect.stringMatching(
        /^REST read with DPoP \(service mode\): 900 req\/s = 0\.90× the bearer read's 1,000 req\/s; p99 55 ms against 50 ms/,
      ),
    ]);
    expect(dpopVersusBearer([row({ name: 'service-rest', path: 'bearer', perSecond: 1 })])).toEqual([]);
  });
});

describe("what the database's backends wait on (pg-waits)", () => {
  it('counts a backend that waits on a row lock, under the statement that waits, in the databases named', async () => {
    const db = await createTestDatabases(['waits']);
    const holder = new Client({ connectionString: db.urls.waits });
    const waiter = new Client({ connectionString: db.urls.waits });
    try {
      await holder.connect();
      await waiter.connect();
      await holder.query('CREATE TABLE balances (id int PRIMARY KEY, amount int NOT NULL)');
      await holder.query('INSERT INTO balances VALUES (1, 0)');
      await holder.query('BEGIN');
      await holder.query('UPDATE balances SET amount = amount + 1 WHERE id = 1');
      const waiting = waiter.query('UPDATE balances SET amount = amount + 2 WHERE id = 1');
      const server = TEST_POSTGRES_URL.replace(/\/[^/]*$/, '');
      const name = new URL(db.urls.waits).pathname.slice(1);
      const ours = await startPgWaits(server, name.slice(0, -'waits'.length), 10);
      const others = await startPgWaits(server, 'no_such_database_', 10);
      await new Promise((r) => setTimeout(r, 400));
      const [seen, unseen] = [await ours.finish(), await others.finish()];
      await holder.query('COMMIT');
      await waiting;

      expect(seen.samples).toBeGreaterThan(5);
      expect(seen.top[0]).toEqual({
        event: 'Lock/transactionid',
        statement: 'UPDATE balances SET amount = amount + 2 WHERE id = 1',
        backends: expect.any(Number),
      });
      // The one waiter in (nearly) every sample; the idle holder is not running a statement.
      expect(seen.top[0]!.backends).toBeGreaterThan(0.8);
      expect(seen.waiting).toBeCloseTo(seen.top[0]!.backends, 5);
      expect(seen.busy).toBeGreaterThanOrEqual(seen.waiting);
      expect(unseen).toMatchObject({ busy: 0, waiting: 0, top: [] });

      expect(
        pgWaitsInWords('placing orders', row({ name: 'orders', path: 'orders', unit: 'orders/s', perSecond: 1, waits: seen })),
      ).toMatch(
        /^PostgreSQL while placing orders: [\d.]+ backends running a statement on average, [\d.]+ of them waiting: Lock\/transactionid [\d.]+ \(UPDATE balances SET amount = amount \+ 2 WHERE id = 1…\) \(\d+ samples\)\.$/,
      );
    } finally {
      await holder.end().catch(() => undefined);
      await waiter.end().catch(() => undefined);
      await db.drop();
    }
  });

  it('says nothing, and never fails the run, when the server cannot be reached', async () => {
    const nowhere = await startPgWaits('postgres://postgres@127.0.0.1:1', 'bench_', 10);
    await new Promise((r) => setTimeout(r, 50));
    const waits = await nowhere.finish();
    expect(waits).toEqual({ samples: 0, busy: 0, waiting: 0, top: [] });
    expect(
      pgWaitsInWords('placing orders', row({ name: 'orders', path: 'orders', unit: 'orders/s', perSecond: 1, waits })),
    ).toBeUndefined();
  });
});
