/** PostgreSQL's own commit rate on the same server, the yardstick for the money paths: pgbench's TPC-B-like run in a throwaway database. */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { databaseNameOf, dropDatabase, ensureDatabase } from '@trading/db';

const run = promisify(execFile);

/** pgbench's summary: 14+ prints `tps = … (without initial connection time)`, older ones two tps lines, the one "excluding connections establishing" the same measure. */
export function parsePgbench(output: string): { tps: number; latencyMs: number | undefined; transactions: number | undefined } {
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

/** `pgbench -i -s 1` into `databaseUrl` (created here, dropped afterwards), then `-c 8 -j 2 -T <seconds>`. */
export async function runPgbench(databaseUrl: string, seconds: number) {
  const pgbench = findPgbench();
  // libpq's environment, so no password lands in a command line.
  const u = new URL(databaseUrl);
  const [user, database] = [decodeURIComponent(u.username || 'postgres'), databaseNameOf(databaseUrl)];
  const env: NodeJS.ProcessEnv = { ...process.env, PGHOST: u.hostname, PGPORT: u.port || '5432', PGUSER: user, PGDATABASE: database };
  if (u.password) env['PGPASSWORD'] = decodeURIComponent(u.password);
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
