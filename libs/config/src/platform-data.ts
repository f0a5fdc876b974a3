import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Where the all-in-one mode keeps its data (embedded PostgreSQL, the generated admin
 * credential): one folder per user. The launcher writes there; the admin CLI reads the
 * credential from there.
 */
export function defaultPlatformDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env['XDG_DATA_HOME'] || join(homedir(), '.local', 'share'), 'trading-api-platform');
}

/** The admin credential's file in that folder (0600). */
export const ADMIN_TOKEN_FILE = 'admin-token';
