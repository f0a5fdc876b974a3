import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { running, runningPostmaster } from './postmaster';

/** A start stops a PostgreSQL left on its cluster: only one that really is PostgreSQL running that very cluster. */
describe('the postmaster left running on a cluster', () => {
  const cluster = mkdtempSync(join(tmpdir(), 'postmaster-'));
  afterAll(() => rmSync(cluster, { recursive: true, force: true }));
  const claim = (pid: number) => writeFileSync(join(cluster, 'postmaster.pid'), `${pid}\n${cluster}\n1700000000\n54329\n`);

  it('is none when postmaster.pid is missing, or names a pid that runs nothing', () => {
    expect(runningPostmaster(cluster)).toBeUndefined();
    claim(2 ** 22 + 1); // above Linux's largest pid
    expect(runningPostmaster(cluster)).toBeUndefined();
  });

  it('is none when postmaster.pid names a live program that is not PostgreSQL on this cluster (a reused or planted pid)', async () => {
    claim(process.pid);
    expect(runningPostmaster(cluster)).toBeUndefined();
    // A program whose command line names the cluster, but which is not PostgreSQL.
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => undefined, 30_000)', cluster]);
    await new Promise((r) => other.once('spawn', r));
    try {
      claim(other.pid!);
      expect(running(other.pid!)).toBe(true);
      expect(runningPostmaster(cluster)).toBeUndefined();
    } finally {
      other.kill('SIGKILL');
    }
  });
});
