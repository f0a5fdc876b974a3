import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const ADMIN_TOKEN_FILE = 'admin-token';

/**
 * The all-in-one mode's admin credential when AUTH_ADMIN_TOKEN is unset: random, made once per
 * data directory and kept there in a file only this user can read, where `npm run admin` finds
 * it. There is no published default anybody could try.
 */
export function ensureAdminToken(dataDir: string): string {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, ADMIN_TOKEN_FILE);
  try {
    const stat = lstatSync(file);
    if (!stat.isFile()) throw new Error(`${file} is not a regular file; remove it`);
    if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) throw new Error(`${file} belongs to another user; remove it`);
    if ((stat.mode & 0o077) !== 0) throw new Error(`${file} is readable by others (mode ${(stat.mode & 0o777).toString(8)}); chmod 600 it or remove it`);
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const token = `adm_${randomBytes(32).toString('base64url')}`;
  writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return token;
}
