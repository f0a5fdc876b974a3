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
 * Records each event once and, in the same statement, one delivery per endpoint that should hear
 * of it: an enabled endpoint of this environment subscribed to the type, of an app the user has
 * a live grant for, whose scopes cover the event and whose chosen accounts (if any) include the
 * account. Nothing for users who never connected the app, or after they disconnected it; an event
 * no endpoint should hear of is not kept at all. Deliveries are queued in the order the events
 * came (an order's changes go out in the order they happened). Returns how many were queued (an
 * event already recorded queues none).
 */
async function recordWebhookEvents(db: Pick<DataSource, 'query'>, events: WebhookEvent[], environment: Environment): Promise<number> {
  const column = <T>(pick: (e: WebhookEvent) => T) => events.map(pick);
  const rows: unknown[] = await db.query(
    `WITH incoming AS (
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::timestamptz[], $8::text[])
         WITH ORDINALITY AS i(id, type, user_id, account_id, dedupe_key, data, occurred_at, scope, n)
     ), targets AS (
       SELECT DISTINCT i.id AS event_id, i.n, e.id AS endpoint_id
         FROM incoming i
         JOIN oauth_grants g ON g.user_id = i.user_id AND g.revoked_at IS NULL AND g.activated_at IS NOT NULL
              AND (i.scope IS NULL OR i.scope = ANY (g.scope))
              AND (i.account_id IS NULL OR g.account_ids IS NULL OR i.account_id = ANY (g.account_ids))
         JOIN webhook_endpoints e ON e.client_id = g.client_id AND e.environment = $9 AND e.enabled AND i.type = ANY (e.event_types)
     ), recorded AS (
       INSERT INTO webhook_events (id, type, user_id, account_id, dedupe_key, data, occurred_at)
       SELECT i.id, i.type, i.user_id, i.account_id, i.dedupe_key, i.data::jsonb, i.occurred_at FROM incoming i
        WHERE EXISTS (SELECT 1 FROM targets t WHERE t.event_id = i.id)
        ORDER BY i.n
       ON CONFLICT DO NOTHING RETURNING id
     )
     INSERT INTO webhook_deliveries (event_id, endpoint_id)
     SELECT t.event_id, t.endpoint_id FROM targets t JOIN recorded r ON r.id = t.event_id ORDER BY t.n, t.endpoint_id
     RETURNING 1`,
    [
      column((e) => e.id),
      column((e) => e.type),
      column((e) => e.userId),
      column((e) => e.accountId),
      column((e) => e.dedupeKey),
      column((e) => JSON.stringify(e.data)),
      column((e) => e.occurredAt),
      column((e) => WEBHOOK_EVENTS[e.type].scope),
      environment,
    ],
  );
  return rows.length;
}

/**
 * Auth's consumer group on the settlement stream: each order change and transfer end becomes a
 * webhook event with its deliveries, committed before the entry is acked (so a crash re-reads
 * it, and the event's id makes the second reading a no-op). These are live events, not bookings:
 * like the facade's order stream, an entry that would become a webhook is believed only if its
 * producer signed it (orders the OMS, transfers banking), and one that fails is logged and passed
 * over, not dead-lettered. Entries that would become no webhook are not checked at all.
 */
export function webhookIngest(
  source: { log: EventLog; stream: string; logger: Logger; signers: EventSigners },
  db: DataSource,
  environment: Environment,
  onQueued: () => void,
): StreamConsumer {
  const believed = (entry: DeliveredEvent): boolean => {
    const problem = eventSignatureProblem(entry, source.signers, PRODUCER_OF[entry.type]!);
    if (problem)
      source.logger.warn({ entryId: entry.entryId, type: entry.type, problem }, 'stream entry not sent as a webhook: unverified');
    return !problem;
  };
  return new StreamConsumer({
    log: source.log,
    stream: source.stream,
    group: 'webhooks',
    logger: source.logger,
    ignores: ['trade.executed', 'order.closed', 'order.reduced'],
    // A batch of entries is recorded in one statement: one round trip, not one per order change.
    handleBatch: async (entries) => {
      // An entry the relay published again (after the stream lost it) may come twice in one batch: once is enough.
      const byId = new Map<string, WebhookEvent>();
      for (const entry of entries) {
        const event = webhookEventOf(entry);
        if (event && !byId.has(event.id) && believed(entry)) byId.set(event.id, event);
      }
      const events = [...byId.values()];
      if (events.length && (await recordWebhookEvents(db, events, environment))) onQueued();
    },
    handle: async () => {
      throw new Error('webhook events are recorded in batches (handleBatch)');
    },
  });
}
