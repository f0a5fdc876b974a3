import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { ADMIN_TOKEN_FILE } from '@trading/config';

export const KEY_ENCRYPTION_KEY_FILE = 'key-encryption-key';

/**
 * A secret of the all-in-one mode that must outlive a restart but was never configured (the
 * admin credential, the key that encrypts the signing keys): random, made once per data
 * directory and kept there in a file only this user can read. There is no published default
 * anybody could try, and `npm run admin` finds the credential by itself.
 */
export function ensureSecretFile(dataDir: string, name: string, prefix: string): string {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, name);
  try {
    const stat = lstatSync(file);
    if (!stat.isFile()) throw new Error(`${file} is not a regular file; remove it`);
    if (typeof process.getuid === 'function' && stat.uid !== process.getuid())
      throw new Error(`${file} belongs to another user; remove it`);
    if ((stat.mode & 0o077) !== 0)
      throw new Error(`${file} is readable by others (mode ${(stat.mode & 0o777).toString(8)}); chmod 600 it or remove it`);
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const secret = `${prefix}${randomBytes(32).toString('base64url')}`;
  writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  return secret;
}

export const ensureAdminToken = (dataDir: string): string => ensureSecretFile(dataDir, ADMIN_TOKEN_FILE, 'adm_');
