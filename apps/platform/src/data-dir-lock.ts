import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDir } from './embedded-postgres';
import { StartError } from './start-error';

const LOCK_FILE = 'platform.pid';

/**
 * Claims the data directory for this copy of the platform: two live copies on one directory would
 * share its PostgreSQL cluster (the second fails with PostgreSQL's own "lock file already exists")
 * and its secrets. A copy that died without cleaning up leaves a pid nobody runs, or a pid reused
 * by some other program: either way the claim is taken over. Released when the process exits.
 */
export function claimDataDir(dataDir: string): void {
  ensurePrivateDir(dataDir);
  const file = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      process.once('exit', () => {
        if (holder(file) === process.pid) unlinkSync(file);
      });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = holder(file);
      if (pid && pid !== process.pid && isPlatform(pid))
        throw new StartError(
          `The data directory ${dataDir} is in use by another running copy of the platform (pid ${pid}). ` +
            'Stop it, or give this copy its own: PLATFORM_DATA_DIR=<another folder> EMBEDDED_POSTGRES_PORT=<free port> npm start.',
        );
      try {
        unlinkSync(file); // left by a copy that is gone
      } catch {
        // another start removed it first: try again
      }
    }
  }
  throw new StartError(`Could not claim the data directory ${dataDir} (${file} keeps coming back); start again`);
}

function holder(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `pid` is alive and is this platform (not some program that got a dead copy's pid). */
function isPlatform(pid: number): boolean {
  try {
    return /platform/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  } catch {
    try {
      process.kill(pid, 0); // no /proc (macOS): alive is the best we can tell
      return true;
    } catch {
      return false;
    }
  }
}
