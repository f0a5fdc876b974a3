import { deriveServiceSecret } from '@trading/auth';
import { connectEventLog, type EventLog } from '@trading/events';
import { CursorCodec } from '@trading/pagination';
import type { ClientLimits } from '../oauth/client-limits';
import type { OAuthContext } from '../oauth/context';
import { pairwiseSubject } from '../oauth/id-token';
import { WebhookDeliveries } from '../webhooks/webhook-deliveries';
import { WebhookDispatcher } from '../webhooks/webhook-dispatcher';
import { WebhookEndpoints } from '../webhooks/webhook-endpoints';
import { webhookIngest } from '../webhooks/webhook-events';
import { adminWebhookRoutes, webhookRoutes } from '../webhooks/webhooks.routes';
import type { Router } from 'express';
import { WebhookSender, type WebhookSenderOptions } from '../webhooks/sending';
import type { Listeners } from './listeners';
import type { AuthServices } from './services';

export interface WebhookDeps {
  /** The settlement stream's log (the all-in-one passes the one its apps share); else auth connects to Redis. */
  events?: EventLog;
  /** How receivers' names are resolved and which certificates they may present (tests). */
  sending?: Pick<WebhookSenderOptions, 'resolve' | 'ca'>;
}

/**
 * Vendors' webhooks: the API an app manages its endpoints and reads its delivery log with
 * (under /webhooks on both listeners, authenticated as at the token endpoint), the consumer that
 * turns the stream's order changes and transfer ends into deliveries, and the sender.
 */
export async function mountWebhooks(
  services: AuthServices,
  { app, internal }: Listeners,
  oauth: OAuthContext,
  limits: ClientLimits,
  deps: WebhookDeps,
): Promise<{ dispatcher: WebhookDispatcher; adminRoutes: Router; newDispatcher: (pollMs?: number) => WebhookDispatcher }> {
  const { config, dataSource, life, logger, webhookSecrets } = services;
  const endpoints = new WebhookEndpoints(dataSource, webhookSecrets);
  const deliveries = new WebhookDeliveries(dataSource, new CursorCodec(deriveServiceSecret(config.SERVICE_KEY, 'cursors')));
  const routes = webhookRoutes(oauth, limits, endpoints, deliveries);
  app.use(routes);
  internal.use(routes);

  const sender = new WebhookSender({ requestTimeoutMs: config.WEBHOOK_TIMEOUT_MS, ...deps.sending });
  life.defer('webhook connections', () => sender.close());
  const subjectFor = async (clientId: string, userId: string) => {
    const client = await services.registry.findClient(clientId, config.APP_ENV, { includeSuspended: true });
    return client ? pairwiseSubject(client, userId) : null;
  };
  const newDispatcher = (pollMs = config.WEBHOOK_DISPATCH_POLL_MS || 1000) =>
    new WebhookDispatcher(
      dataSource,
      endpoints,
      sender,
      {
        environment: config.APP_ENV,
        pollMs,
        leaseMs: config.WEBHOOK_LEASE_MS,
        retryScheduleMs: config.WEBHOOK_RETRY_SCHEDULE_SECONDS.map((s) => Math.round(s * 1000)),
        disableAfterMs: config.WEBHOOK_DISABLE_AFTER_SECONDS * 1000,
        batchSize: 10,
      },
      logger,
      subjectFor,
    );
  const dispatcher = newDispatcher();
  if (config.WEBHOOK_DISPATCH_POLL_MS > 0) {
    dispatcher.start();
    life.defer('webhook dispatcher', () => dispatcher.stop());
  }

  const events = deps.events ?? life.own('event log', await connectEventLog(config), (e) => e.close());
  const ingest = webhookIngest(
    { log: events, stream: config.EVENTS_STREAM, logger, signers: config.SERVICE_TRUSTED_KEYS },
    dataSource,
    config.APP_ENV,
    () => dispatcher.wake(),
  );
  await ingest.start();
  life.defer('webhook events consumer', () => ingest.stop());
  return { dispatcher, newDispatcher, adminRoutes: adminWebhookRoutes(dataSource, endpoints, deliveries) };
}
