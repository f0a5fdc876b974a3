import './tracing';
import { ConfigError } from '@trading/config';
import { createLogger, logToFileForPeople } from '@trading/logging';
import { connectStore } from '@trading/redis';
import { shutdownTracing } from '@trading/tracing';
import { printBanner } from './banner';
import { loadPlatformConfig, platformLogFile } from './config';
import { claimDataDir } from './data-dir-lock';
import { ensurePrivateDir } from './embedded-postgres';
import { StartError } from './start-error';
import { refuseTakenPorts } from './ports';
import { APPS_STOP_GRACE_MS } from './postmaster';
import { isWorker, runPrimary } from './primary';

/** `npm start`: the whole product on every core (or in this one process), then a banner with what a newcomer needs. */
async function main(): Promise<void> {
  const config = loadPlatformConfig();
  // JSON lines are for a log collector or the log file; a person at the terminal reads plain lines.
  if (config.LOG_FORMAT === 'human') {
    ensurePrivateDir(config.PLATFORM_DATA_DIR);
    logToFileForPeople(platformLogFile(config));
  }
  const logger = createLogger('platform', config.LOG_LEVEL);
  // The apps are loaded only where they run: the primary of several workers only forks and waits.
  if (isWorker()) return (await import('./worker.js')).runWorker(config, logger);

  console.log(
    config.DATABASE_URL ? 'Starting every service…' : `Starting every service (embedded PostgreSQL in ${config.PLATFORM_DATA_DIR})…`,
  );
  claimDataDir(config.PLATFORM_DATA_DIR);
  await refuseTakenPorts(config);
  if (config.PLATFORM_WORKERS > 1 && (await redisReachable(config.REDIS_URL))) return runPrimary(config, logger, config.PLATFORM_WORKERS);

  const { createPlatform } = await import('./app.js');
  const { loadServiceIdentities } = await import('./service-identities.js');
  const platform = await createPlatform(config, logger, { serviceKeys: loadServiceIdentities(config, logger) });
  const demoCredentials = await (await import('./demo-start.js')).prepareDemo(platform, config);
  printBanner(config, { urls: platform.urls, storeKind: platform.store.kind, embedded: platform.embedded, demoCredentials, processes: 1 });

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    console.log('\nStopping…');
    // Whatever close() waits on (a data store that came back half-way, say), the process ends within its grace period,
    // its embedded PostgreSQL stopped on the way out (embedded-postgres.ts).
    setTimeout(() => {
      logger.error({ graceMs: APPS_STOP_GRACE_MS }, 'the platform did not close in time; exiting anyway');
      process.exit(1);
    }, APPS_STOP_GRACE_MS);
    await platform.close();
    await shutdownTracing().catch((err: unknown) => logger.warn({ err }, 'flushing traces failed'));
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

/** Several processes share sessions and limits through Redis; without it (the in-process stand-in) there is one. */
async function redisReachable(url: string): Promise<boolean> {
  const store = await connectStore(url, { fallbackToMemory: true, onFallback: () => undefined });
  await store.close();
  return store.kind === 'redis';
}

main().catch((err: unknown) => {
  // An operator reads one or two plain lines; the stack is for LOG_LEVEL=debug.
  if (err instanceof ConfigError || err instanceof StartError) console.error(err.message);
  else if (process.env['LOG_LEVEL'] === 'debug' || process.env['LOG_LEVEL'] === 'trace') console.error(err);
  else console.error(`The platform did not start: ${err instanceof Error ? err.message : String(err)} (LOG_LEVEL=debug shows the details)`);
  process.exit(1);
});
