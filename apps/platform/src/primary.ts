/**
 * `npm start` on every core: the primary process holds what must exist once (the embedded
 * PostgreSQL, the data directory's secrets, the services' identities) and forks workers that
 * each run every app on the same ports (Node's cluster hands connections round robin). The
 * apps are built for several instances (advisory-locked migrations, SKIP LOCKED workers,
 * consumer groups, Redis for sessions and limits), so two workers behave as one platform.
 */
import cluster, { type Worker } from 'node:cluster';
import { exportServiceKey } from '@trading/auth';
import type { Logger } from '@trading/logging';
import { ensureAdminToken, ensureSecretFile, KEY_ENCRYPTION_KEY_FILE } from './admin-token';
import { printBanner } from './banner';
import type { ListeningMessage, PlatformReadyMessage, ReadyMessage, StartMessage } from './cluster-messages';
import { sumWorkerMetrics } from './cluster-metrics';
import type { PlatformConfig } from './config';
import { startEmbeddedPostgres } from './embedded-postgres';
import { APPS_STOP_GRACE_MS } from './postmaster';
import { loadServiceIdentities } from './service-identities';

/** Worker deaths within a minute that mean a crash loop, not an accident: the platform stops. */
const RESTARTS_PER_MINUTE = 5;

export async function runPrimary(config: PlatformConfig, logger: Logger, workers: number): Promise<void> {
  // Made once here, so the workers read the same files instead of racing to create them. The services'
  // identities of this installation (kept in its data directory, sealed) first: a key-encryption key that
  // does not open them stops the start before anything else runs.
  if (!config.AUTH_ADMIN_TOKEN) ensureAdminToken(config.PLATFORM_DATA_DIR);
  if (!config.AUTH_KEY_ENCRYPTION_KEY) ensureSecretFile(config.PLATFORM_DATA_DIR, KEY_ENCRYPTION_KEY_FILE, 'kek_');
  const serviceKeys = Object.fromEntries(
    Object.entries(loadServiceIdentities(config, logger)).map(([service, key]) => [service, exportServiceKey(key)]),
  );
  const pg = config.DATABASE_URL ? undefined : await startEmbeddedPostgres(config.PLATFORM_DATA_DIR, config.EMBEDDED_POSTGRES_PORT, logger);

  // A scrape of any worker's /metrics answers for every worker (cluster-metrics.ts).
  sumWorkerMetrics();
  let stopping = false;
  const running = new Set<Worker>();
  const deaths: number[] = [];
  let platformUp = false;
  /**
   * Starts a worker and keeps one in its place: a worker that dies (killed, out of memory, a
   * failed start while PostgreSQL blinks) is replaced after a back-off that doubles with each
   * death in the last minute (1 s … 30 s). Only a tight loop (RESTARTS_PER_MINUTE deaths in a
   * minute) stops the platform, saying so: the other workers keep serving meanwhile.
   */
  const fork = (role: { first: boolean; priceFeed: boolean }) =>
    new Promise<ReadyMessage['started']>((resolve, reject) => {
      const worker = cluster.fork();
      running.add(worker);
      let ready = false;
      worker.on('message', (message: ListeningMessage | ReadyMessage) => {
        // Sent once the worker listens for it: a message sent earlier would be lost.
        if (message?.type === 'waiting') worker.send({ type: 'start', databaseUrl: pg?.url, serviceKeys, ...role } satisfies StartMessage);
        if (message?.type === 'ready') {
          ready = true;
          if (platformUp) worker.send({ type: 'platform-ready' } satisfies PlatformReadyMessage);
          resolve(message.started);
        }
      });
      worker.on('exit', (code, signal) => {
        running.delete(worker);
        if (stopping) return reject(new Error(`worker exited while stopping (${signal ?? code})`));
        const now = Date.now();
        deaths.push(now);
        while (deaths.length && deaths[0]! < now - 60_000) deaths.shift();
        if (deaths.length >= RESTARTS_PER_MINUTE) {
          logger.error(
            { code, signal, deathsInLastMinute: deaths.length },
            'platform workers keep dying (see the lines above for why); stopping everything',
          );
          reject(new Error('platform workers keep dying'));
          return void stop(1);
        }
        const delayMs = Math.min(30_000, 1000 * 2 ** (deaths.length - 1));
        logger.warn(
          { pid: worker.process.pid, code, signal, restartInMs: delayMs, whileStarting: !ready },
          'a platform worker died; starting another in its place',
        );
        // A replacement of a started worker never migrates or seeds again (one that died starting does
        // what it was to do); either way it takes over the price feed if the dead one ran it.
        const replacement = () => fork(ready ? { first: false, priceFeed: role.priceFeed } : role);
        setTimeout(() => {
          if (stopping) return;
          const started = replacement();
          if (ready)
            void started.then(
              () => logger.warn('the replacement platform worker is serving'),
              () => undefined,
            );
          else started.then(resolve, reject);
        }, delayMs).unref();
      });
    });

  const stop = async (status = 0) => {
    if (stopping) return;
    stopping = true;
    console.log('\nStopping…');
    if (await stopWorkers([...running], logger)) status = 1;
    await pg?.stop().catch((err) => logger.error({ err }, 'stopping the embedded PostgreSQL failed'));
    process.exit(status);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());

  // The first worker migrates and seeds alone; the others then start together.
  const first = await fork({ first: true, priceFeed: true });
  await Promise.all(Array.from({ length: workers - 1 }, () => fork({ first: false, priceFeed: false })));
  // Ready only now, all at once: until here /readyz said 503 wherever a caller's connection landed.
  platformUp = true;
  for (const worker of running) worker.send({ type: 'platform-ready' } satisfies PlatformReadyMessage);
  printBanner(config, { ...first, embedded: !!pg, processes: workers });
}

/**
 * SIGTERM to each worker, and SIGKILL to one still running after its grace period: true when one
 * had to be killed or said it could not close everything.
 */
async function stopWorkers(workers: Worker[], logger: Logger): Promise<boolean> {
  let failed = false;
  await Promise.all(
    workers.map(
      (worker) =>
        new Promise<void>((done) => {
          // A worker still running after its grace period is a failed stop, said so and in the exit status.
          // The grace is short enough for PostgreSQL to be stopped after it within a supervisor's 10 s.
          const kill = setTimeout(() => {
            logger.error({ pid: worker.process.pid, graceMs: APPS_STOP_GRACE_MS }, 'a platform worker did not exit in time; killed');
            failed = true;
            worker.process.kill('SIGKILL');
          }, APPS_STOP_GRACE_MS);
          worker.once('exit', (code) => {
            clearTimeout(kill);
            if (code) failed = true; // it said it could not close everything
            done();
          });
          worker.process.kill('SIGTERM');
        }),
    ),
  );
  return failed;
}

export const isWorker = () => cluster.isWorker;
