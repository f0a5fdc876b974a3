/**
 * `npm run bench`: every path tools/bench/README.md lists, measured in one run on this machine, each
 * target started as a user or a deployment starts it (child processes; the bench imports no app).
 * Prints a Markdown table and the ratios, and writes tools/bench/results.json (a full run) or the
 * log folder's results.json (`--only`). Nothing asserts on time: the exit status is 1 only when a
 * target answers wrongly (its preflight, or > 1% of the window).
 */
import { execFileSync, execSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_REDIS_URL, uniqueId } from '@trading/testing';
import { CONNECTIONS, ROTATION_CHAINS } from './load';
import { Bench, POSTGRES_SERVER, RATE_LIMITS, SECONDS, WARMUP_SECONDS } from './measure';
import { allInOne, bare, oidcPeer, pgbench, serviceMode, stockChain } from './paths';
import { ROOT } from './processes';
import { formatTable, parseOnly, PATHS, ratiosInWords, ROWS, type Memory, type PathName } from './report';

const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();

/**
 * What to measure: the working tree (a developer's own change; `uncommitted` names the tracked
 * files that differ from the commit), or with `--head` (`--commit <rev>`) that commit alone,
 * unpacked into a temporary folder (`git archive`, the project's node_modules linked in) so that
 * edits under way in the shared tree are not measured.
 */
function sourceOf(argv: string[]): { root: string; commit: string; uncommitted: string[]; remove(): void } {
  const at = argv.indexOf('--commit');
  if (at < 0 && !argv.includes('--head')) {
    const uncommitted = git('status', '--porcelain', '--untracked-files=no').split('\n').filter(Boolean);
    return { root: ROOT, commit: git('rev-parse', 'HEAD'), uncommitted, remove: () => undefined };
  }
  const commit = git('rev-parse', '--verify', `${(at >= 0 && argv[at + 1]) || 'HEAD'}^{commit}`);
  const root = mkdtempSync(join(tmpdir(), `bench-${commit.slice(0, 7)}-`));
  execSync(`git archive ${commit} | tar -x -C ${JSON.stringify(root)}`, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  return { root, commit, uncommitted: [], remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** Each selected path, in an order that starts each target once; answers the all-in-one's memory. */
async function runPaths(bench: Bench, root: string, only: Set<PathName>, id: string, logDir: string): Promise<Memory | undefined> {
  const options = { root, postgresServer: POSTGRES_SERVER, redisUrl: TEST_REDIS_URL, prefix: `bench_${id}_`, logDir };
  const any = (...paths: PathName[]) => paths.some((p) => only.has(p));
  let memory: Memory | undefined;
  if (only.has('bare')) await bare(bench, logDir);
  if (only.has('stock')) await stockChain(bench, logDir);
  if (only.has('oidc-peer')) await oidcPeer(bench, id, logDir);
  if (any('all-in-one', 'all-in-one-orders', 'bars', 'webhooks')) memory = await allInOne(bench, options, only);
  if (any('service-rest', 'gateway', 'rotation', 'orders', 'market'))
    await serviceMode(bench, { ...options, prefix: `bench_${id}_svc_` }, only);
  if (any('orders', 'market', 'all-in-one-orders')) await pgbench(bench, id);
  return memory;
}

const MACHINE = { cores: availableParallelism(), cpu: cpus()[0]?.model, node: process.version };

/** The line above the table: the machine, the method, and what was measured (`uncommitted`: the working tree's changed files). */
function runLine(commit: string, uncommitted: string[] | undefined): string {
  const what = !uncommitted ? ' (a snapshot)' : uncommitted.length ? ` + ${uncommitted.length} uncommitted file(s)` : '';
  return (
    `\n${MACHINE.cores} cores (${MACHINE.cpu ?? 'unknown CPU'}), Node ${MACHINE.node}, ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ` +
    `${SECONDS} s per target, rate limits ${RATE_LIMITS ? 'on' : 'off'}, commit ${commit.slice(0, 7)}${what}\n`
  );
}

async function main(): Promise<number> {
  const only = parseOnly(process.argv.slice(2));
  const [id, logDir, source, bench] = [uniqueId(), mkdtempSync(join(tmpdir(), 'bench-')), sourceOf(process.argv), new Bench()];
  let [memory, failed]: [Memory | undefined, boolean] = [undefined, false];
  try {
    memory = await runPaths(bench, source.root, only, id, logDir);
  } catch (err) {
    failed = true;
    console.error(err instanceof Error ? err.message : err);
  } finally {
    bench.generator.stop();
    source.remove();
  }

  const order = ROWS.map(([name]) => name);
  const rows = [...bench.rows].sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
  const ratios = ratiosInWords(rows, memory);
  console.log(runLine(source.commit, source.root === ROOT ? source.uncommitted : undefined));
  console.log(`${formatTable(rows)}\n`);
  for (const line of ratios) console.log(`- ${line}`);

  // results.json: the figures, and what another run needs to be compared with them.
  const full = only.size === PATHS.length && !failed;
  const file = full ? join(ROOT, 'tools/bench/results.json') : join(logDir, 'results.json');
  const rateLimits = RATE_LIMITS ? 'on, budgets no load reaches' : 'off (BENCH_RATE_LIMITS=off)';
  const [warmupSeconds, seconds, rotationChains] = [WARMUP_SECONDS, SECONDS, ROTATION_CHAINS];
  const method = { connections: CONNECTIONS, warmupSeconds, seconds, rotationChains, rateLimits, paths: [...only] };
  const { commit, uncommitted } = source;
  const measured = source.root === ROOT ? 'the working tree' : 'a snapshot of the commit (--head, --commit)';
  const results = { date: new Date().toISOString(), commit, measured, uncommitted, machine: MACHINE, method, rows, memory, ratios };
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
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
