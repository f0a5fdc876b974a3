/** A worker of the all-in-one on every core (see primary.ts): every app, on the ports the workers share. */
import { parseServiceKey, type ServiceKey, type ServiceName } from '@trading/auth';
import type { Logger } from '@trading/logging';
import { holdReadiness, shareMetricsWith } from '@trading/service';
import { shutdownTracing } from '@trading/tracing';
import { createPlatform } from './app';
import type { PlatformConfig } from './config';
import type { ListeningMessage, PlatformReadyMessage, ReadyMessage, StartMessage } from './cluster-messages';
import { shareWorkerMetrics } from './cluster-metrics';
import { prepareDemo } from './demo-start';
import { untilDataStoresAnswer } from './dependencies';

/** A worker: waits for the primary's start message, runs every app, reports ready, drains on SIGTERM. */
export function runWorker(config: PlatformConfig, logger: Logger): void {
  const releaseReadiness = holdReadiness('the platform is starting: not every worker is up yet');
  process.on('message', (message: PlatformReadyMessage) => {
    if (message?.type === 'platform-ready') releaseReadiness();
  });
  // Every service's /metrics answers for all the workers together (cluster-metrics.ts).
  shareMetricsWith(shareWorkerMetrics());
  // The start message, whatever else the primary sends first (a request for this worker's metrics).
  const onStart = (message: StartMessage) => {
    if (message?.type !== 'start') return;
    process.off('message', onStart);
    void (async () => {
      const serviceKeys = Object.fromEntries(
        Object.entries(message.serviceKeys).map(([service, json]) => [service, parseServiceKey(service as ServiceName, json)]),
      ) as Record<ServiceName, ServiceKey>;
      const databaseUrl = message.databaseUrl ?? config.DATABASE_URL;
      if (databaseUrl) await untilDataStoresAnswer(databaseUrl, config.REDIS_URL, logger);
      const platform = await createPlatform(
        {
          ...config,
          DATABASE_URL: databaseUrl,
          PLATFORM_SEED_DEMO: message.first && config.PLATFORM_SEED_DEMO,
        },
        logger,
        { serviceKeys, ...(message.priceFeed ? {} : { oms: { OMS_PRICE_TICK_MS: '0' } }) },
      );
      const demoCredentials = message.first ? await prepareDemo(platform, config) : '';
      let stopping = false;
      process.on('SIGTERM', () => {
        if (stopping) return;
        stopping = true;
        void platform
          .close()
          .then(() => shutdownTracing().catch((err: unknown) => logger.warn({ err }, 'flushing traces failed')))
          .then(
            () => process.exit(0),
            (err: unknown) => {
              logger.error({ err }, 'a platform worker failed to close everything');
              process.exit(1);
            },
          );
      });
      // Ctrl-C reaches the whole process group: the primary decides, the workers wait for its SIGTERM.
      process.on('SIGINT', () => undefined);
      process.send!({
        type: 'ready',
        started: { urls: platform.urls, storeKind: platform.store.kind, demoCredentials },
      } satisfies ReadyMessage);
    })().catch((err) => {
      logger.fatal({ err }, 'platform worker failed to start');
      process.exit(1);
    });
  };
  process.on('message', onStart);
  process.send!({ type: 'waiting' } satisfies ListeningMessage);
}
