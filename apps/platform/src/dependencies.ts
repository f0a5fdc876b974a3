/** A worker's start waits for the data stores it needs instead of dying on a blip (the primary would only start another). */
import { Client } from 'pg';
import { createClient } from 'redis';
import type { Logger } from '@trading/logging';

const RETRY_MS = 1000;

/** Resolves once `check` passes; says once that it is waiting, and once that the wait is over. */
async function untilAnswering(what: string, check: () => Promise<void>, logger: Logger): Promise<void> {
  let waiting = false;
  for (;;) {
    try {
      await check();
      if (waiting) logger.warn(`${what} answers again; the worker starts`);
      return;
    } catch (err) {
      if (!waiting)
        logger.warn({ reason: (err as Error)?.message }, `${what} does not answer; the worker waits for it (trying every second)`);
      waiting = true;
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  }
}

/** PostgreSQL at `url` and Redis at `redisUrl` both answer. */
export async function untilDataStoresAnswer(url: string, redisUrl: string, logger: Logger): Promise<void> {
  await untilAnswering(
    'PostgreSQL',
    async () => {
      const client = new Client({ connectionString: url, connectionTimeoutMillis: 3000 });
      try {
        await client.connect();
        await client.query('SELECT 1');
      } finally {
        await client.end().catch(() => undefined);
      }
    },
    logger,
  );
  await untilAnswering(
    'Redis',
    async () => {
      const client = createClient({ url: redisUrl, socket: { connectTimeout: 3000, reconnectStrategy: false } });
      client.on('error', () => undefined); // the failed connect rejects; nothing else to report
      try {
        await client.connect();
        await client.ping();
      } finally {
        await client.quit().catch(() => client.disconnect().catch(() => undefined));
      }
    },
    logger,
  );
}
