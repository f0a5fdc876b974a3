/**
 * PostgreSQL's own commit rate on the same server, as the yardstick for order placement:
 * pgbench's TPC-B-like run (`pgbench -i -s 1` into a throwaway database, then
 * `pgbench -c 8 -j 2 -T <seconds>`).
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { databaseNameOf, dropDatabase, ensureDatabase } from '@trading/db';

const run = promisify(execFile);

export interface PgbenchResult {
  tps: number;
  latencyMs: number | undefined;
  transactions: number | undefined;
}

/**
 * The figures of pgbench's summary. pgbench 14+ prints `tps = … (without initial connection
 * time)`; older ones print two tps lines, of which the one "excluding connections establishing"
 * is the same measure.
 */
export function parsePgbench(output: string): PgbenchResult {
  const tpsLines = [...output.matchAll(/^tps = ([\d.]+) \(([^)]*)\)/gm)];
  const chosen = tpsLines.find((m) => /without initial connection|excluding/.test(m[2]!)) ?? tpsLines[0];
  if (!chosen) throw new Error(`no "tps = …" line in pgbench's output:\n${output.slice(-600)}`);
  const latency = /^latency average = ([\d.]+) ms/m.exec(output);
  const transactions = /^number of transactions actually processed: (\d+)/m.exec(output);
  return {
    tps: Number(chosen[1]),
    latencyMs: latency ? Number(latency[1]) : undefined,
    transactions: transactions ? Number(transactions[1]) : undefined,
  };
}

/** pgbench on PATH, else Debian's versioned one (the newest). */
function findPgbench(): string {
  for (const dir of (process.env['PATH'] ?? '').split(':')) if (dir && existsSync(`${dir}/pgbench`)) return `${dir}/pgbench`;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) if (existsSync(`${root}/${v}/bin/pgbench`)) return `${root}/${v}/bin/pgbench`;
  throw new Error('pgbench not found (apt-get install postgresql-client, or put it on PATH)');
}

/** libpq's environment for a postgres:// URL, so no password lands in a command line. */
function libpqEnv(url: string): NodeJS.ProcessEnv {
  const u = new URL(url);
  return {
    ...process.env,
    PGHOST: u.hostname,
    PGPORT: u.port || '5432',
    PGUSER: decodeURIComponent(u.username || 'postgres'),
    ...(u.password ? { PGPASSWORD: decodeURIComponent(u.password) } : {}),
    PGDATABASE: databaseNameOf(url),
  };
}

/** Initialises `databaseUrl` (created here, dropped afterwards) and runs the TPC-B-like load for `seconds`. */
export async function runPgbench(databaseUrl: string, seconds: number): Promise<PgbenchResult & { command: string }> {
  const pgbench = findPgbench();
  const env = libpqEnv(databaseUrl);
  await ensureDatabase(databaseUrl);
  try {
    await run(pgbench, ['-i', '-s', '1', '-q'], { env });
    const args = ['-c', '8', '-j', '2', '-T', String(seconds)];
    const { stdout } = await run(pgbench, args, { env, maxBuffer: 4 * 1024 * 1024 });
    return { ...parsePgbench(stdout), command: `pgbench ${args.join(' ')} (scale 1)` };
  } finally {
    await dropDatabase(databaseUrl);
  }
}
