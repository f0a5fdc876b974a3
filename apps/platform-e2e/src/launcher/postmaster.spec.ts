import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeStaleLockFile, removeStaleSocketLock, running, runningPostmaster } from '@trading/platform';

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

  it('has its lock file removed once its server is dead, a zombie not yet reaped among them', async () => {
    // A zombie: `sleep 0.1` exits, and its parent (the exec'd `sleep 5`) never reaps it.
    const parent = spawn('sh', ['-c', 'sleep 0.1 & echo $!; exec sleep 5']);
    const zombie = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (d) => resolve(String(d)))));
    try {
      await new Promise((r) => setTimeout(r, 400));
      expect(running(zombie)).toBe(false);
      // It still answers a signal, which is what PostgreSQL asks of the pid in its lock file.
      expect(() => process.kill(zombie, 0)).not.toThrow();
      claim(zombie);
      expect(removeStaleLockFile(cluster)).toBe(true);
      expect(existsSync(join(cluster, 'postmaster.pid'))).toBe(false);
      // The socket's lock file names the postmaster too: the zombie's goes, a live server's stays.
      const socketLock = join(cluster, '.s.PGSQL.54329.lock');
      writeFileSync(socketLock, `${zombie}\n${cluster}\n`);
      expect(removeStaleSocketLock(54329, cluster)).toBe(true);
      expect(existsSync(socketLock)).toBe(false);
      writeFileSync(socketLock, `${process.pid}\n${cluster}\n`);
      expect(removeStaleSocketLock(54329, cluster)).toBe(false);
      expect(existsSync(socketLock)).toBe(true);
      expect(removeStaleSocketLock(54330, cluster)).toBe(false); // none there
    } finally {
      parent.kill('SIGKILL');
    }
    claim(2 ** 22 + 1);
    expect(removeStaleLockFile(cluster)).toBe(true);
    expect(removeStaleLockFile(cluster)).toBe(false); // nothing left to remove
  });
});
