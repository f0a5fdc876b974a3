import type { DataSource } from '@trading/db';
import { eventSignatureProblem, StreamConsumer, type DeliveredEvent, type EventLog, type EventSigners } from '@trading/events';
import type { Logger } from '@trading/logging';
import { fundingEventType, orderEventType, WEBHOOK_EVENTS, type WebhookEventType } from '@trading/webhooks';
import type { Environment } from '../registry/vendor-apps';

/** What happened, as a webhook announces it, before it is fanned out to endpoints. */
interface WebhookEvent {
  /** The event id the producer gave the change (the message id derives from it). */
  id: string;
  type: WebhookEventType;
  userId: string;
  /** The account it concerns, when a grant limited to chosen accounts must reach it. */
  accountId: string | null;
  /** The same change announced twice (a retry, an update that changed nothing a vendor sees) is one event. */
  dedupeKey: string;
  data: Record<string, unknown>;
  occurredAt: string;
}

/** The stream's producers this consumer believes, per event type: orders from the OMS, transfers from banking. */
const PRODUCER_OF: Record<string, string> = { 'order.updated': 'oms', 'funding.updated': 'banking' };

const record = (v: unknown): Record<string, unknown> | null =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
const text = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);

/**
 * The webhook event a stream entry is, or null when no vendor hears of it: an order's change of
 * status (with its filled quantity, so each partial fill is its own event), a transfer's end.
 * Entries without the user they concern (published before producers named it) are passed over.
 */
export function webhookEventOf(entry: DeliveredEvent): WebhookEvent | null {
  const userId = text(entry.payload['userId']);
  const occurredAt = text(entry.payload['occurredAt']) ?? new Date().toISOString();
  if (!userId) return null;
  if (entry.type === 'order.updated') {
    const order = record(entry.payload['order']);
    const type = order && orderEventType(order);
    if (!order || !type) return null;
    return {
      id: entry.eventId,
      type,
      userId,
      accountId: text(order['accountId']),
      dedupeKey: `${type}:${String(order['id'])}:${String(order['filledQuantity'] ?? '')}`,
      data: { order },
      occurredAt,
    };
  }
  if (entry.type === 'funding.updated') {
    const transaction = record(entry.payload['transaction']);
    const type = transaction && fundingEventType(transaction);
    if (!transaction || !type) return null;
    return {
      id: entry.eventId,
      type,
      userId,
      accountId: text(transaction['accountId']),
      dedupeKey: `${type}:${String(transaction['id'])}`,
      data: { transaction },
      occurredAt,
    };
  }
  return null;
}

/**
 * Records an event once and, in the same statement, one delivery per endpoint that should hear
 * of it: an enabled endpoint of this environment subscribed to the type, of an app the user has
 * a live grant for, whose scopes cover the event and whose chosen accounts (if any) include the
 * account. Nothing for users who never connected the app, or after they disconnected it; an event
 * no endpoint should hear of is not kept at all. Returns how many deliveries were queued (0 as
 * well for an event already recorded).
 */
async function recordWebhookEvent(db: Pick<DataSource, 'query'>, event: WebhookEvent, environment: Environment): Promise<number> {
  const rows: unknown[] = await db.query(
    `WITH targets AS (
       SELECT DISTINCT e.id FROM webhook_endpoints e JOIN oauth_grants g ON g.client_id = e.client_id
        WHERE g.user_id = $3 AND g.revoked_at IS NULL AND g.activated_at IS NOT NULL
          AND e.environment = $8 AND e.enabled AND $2 = ANY (e.event_types)
          AND ($9::text IS NULL OR $9 = ANY (g.scope))
          AND ($4::uuid IS NULL OR g.account_ids IS NULL OR $4 = ANY (g.account_ids))
     ), recorded AS (
       INSERT INTO webhook_events (id, type, user_id, account_id, dedupe_key, data, occurred_at)
       SELECT $1::uuid, $2::text, $3::uuid, $4::uuid, $5::text, $6::jsonb, $7::timestamptz WHERE EXISTS (SELECT 1 FROM targets)
       ON CONFLICT DO NOTHING RETURNING id
     )
     INSERT INTO webhook_deliveries (event_id, endpoint_id)
     SELECT recorded.id, targets.id FROM recorded, targets
     RETURNING 1`,
    [
      event.id,
      event.type,
      event.userId,
      event.accountId,
      event.dedupeKey,
      JSON.stringify(event.data),
      event.occurredAt,
      environment,
      WEBHOOK_EVENTS[event.type].scope,
    ],
  );
  return rows.length;
}

/**
 * Auth's consumer group on the settlement stream: each order change and transfer end becomes a
 * webhook event with its deliveries, committed before the entry is acked (so a crash re-reads
 * it, and the event's id makes the second reading a no-op). Only what the OMS (orders) or banking
 * (transfers) signed is believed; anything else on the stream is read past.
 */
export function webhookIngest(
  source: { log: EventLog; stream: string; logger: Logger; signers: EventSigners },
  db: DataSource,
  environment: Environment,
  onQueued: () => void,
  consumer?: string,
): StreamConsumer {
  return new StreamConsumer({
    log: source.log,
    stream: source.stream,
    group: 'webhooks',
    ...(consumer ? { consumer } : {}),
    logger: source.logger,
    ignores: ['trade.executed', 'order.closed', 'order.reduced'],
    refuse: (entry) => {
      const producer = PRODUCER_OF[entry.type];
      return producer ? eventSignatureProblem(entry, source.signers, producer) : null;
    },
    handle: async (entry) => {
      const event = webhookEventOf(entry);
      if (event && (await recordWebhookEvent(db, event, environment))) onQueued();
    },
  });
}
