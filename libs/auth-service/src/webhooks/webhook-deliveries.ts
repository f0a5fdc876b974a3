import type { DataSource } from '@trading/db';
import { AppError, isUuid } from '@trading/errors';
import { parseLimit, type CursorCodec, type Page } from '@trading/pagination';
import { isWebhookEventType, messageIdOf } from '@trading/webhooks';

const STATUSES = ['PENDING', 'DELIVERED', 'FAILED', 'DROPPED'] as const;

interface WebhookAttemptView {
  attemptedAt: string;
  /** The receiver's HTTP status, or null when none came (refused address, timeout, connection failure). */
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** The first bytes the receiver answered (at most 1 KiB), as text. */
  responseSnippet: string | null;
}

export interface WebhookDeliveryView {
  id: string;
  endpointId: string;
  /** The `webhook-id` header: the same on every attempt and redelivery. */
  messageId: string;
  eventType: string;
  status: (typeof STATUSES)[number];
  attempts: number;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
  lastStatusCode: number | null;
  lastError: string | null;
  attemptLog: WebhookAttemptView[];
}

export interface DeliveryFilter {
  endpointId?: unknown;
  eventType?: unknown;
  status?: unknown;
  limit?: unknown;
  cursor?: unknown;
}

interface DeliveryRow {
  id: string;
  seq: string;
  endpoint_id: string;
  event_id: string;
  type: string;
  status: WebhookDeliveryView['status'];
  attempts: number;
  next_attempt_at: Date;
  delivered_at: Date | null;
  created_at: Date;
  last_status_code: number | null;
  last_error: string | null;
  attempt_log: Array<{
    attempted_at: string;
    status_code: number | null;
    duration_ms: number;
    error: string | null;
    response_snippet: string | null;
  }>;
}

const iso = (d: Date | string | null) => (d ? new Date(d).toISOString() : null);

function present(row: DeliveryRow): WebhookDeliveryView {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    messageId: messageIdOf(row.event_id),
    eventType: row.type,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.status === 'PENDING' ? iso(row.next_attempt_at) : null,
    deliveredAt: iso(row.delivered_at),
    createdAt: iso(row.created_at)!,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    attemptLog: row.attempt_log.map((a) => ({
      attemptedAt: iso(a.attempted_at)!,
      statusCode: a.status_code,
      durationMs: a.duration_ms,
      error: a.error,
      responseSnippet: a.response_snippet,
    })),
  };
}

function parseFilter(filter: DeliveryFilter): { endpointId: string | null; eventType: string | null; status: string | null } {
  const { endpointId, eventType, status } = filter;
  if (endpointId !== undefined && !isUuid(endpointId))
    throw new AppError('BAD_USER_INPUT', 'endpointId must be a webhook endpoint id (a UUID)', { field: 'endpointId' });
  if (eventType !== undefined && !isWebhookEventType(eventType))
    throw new AppError('BAD_USER_INPUT', 'eventType is not an event type', { field: 'eventType' });
  if (status !== undefined && !STATUSES.includes(status as never))
    throw new AppError('BAD_USER_INPUT', `status must be one of ${STATUSES.join(', ')}`, { field: 'status' });
  return { endpointId: (endpointId as string) ?? null, eventType: (eventType as string) ?? null, status: (status as string) ?? null };
}

const SELECT_DELIVERIES = `
  SELECT d.id, d.seq::text, d.endpoint_id, d.event_id, ev.type, d.status, d.attempts, d.next_attempt_at, d.delivered_at,
         d.created_at, d.last_status_code, d.last_error,
         COALESCE((SELECT jsonb_agg(jsonb_build_object('attempted_at', a.attempted_at, 'status_code', a.status_code,
                     'duration_ms', a.duration_ms, 'error', a.error, 'response_snippet', a.response_snippet) ORDER BY a.id)
                     FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]'::jsonb) AS attempt_log
    FROM webhook_deliveries d
    JOIN webhook_endpoints e ON e.id = d.endpoint_id
    JOIN webhook_events ev ON ev.id = d.event_id`;

/** An app's delivery log (newest first) and redelivery, within its own endpoints only. */
export class WebhookDeliveries {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
  ) {}

  async list(clientId: string, filter: DeliveryFilter): Promise<Page<WebhookDeliveryView>> {
    const limit = parseLimit(filter.limit);
    const { endpointId, eventType, status } = parseFilter(filter);
    const scope = `webhook-deliveries:${clientId}`;
    const after = this.cursors.decode<{ seq: string }>(filter.cursor, scope, ['seq']);
    const rows: DeliveryRow[] = await this.dataSource.query(
      `${SELECT_DELIVERIES}
        WHERE e.client_id = $1 AND ($2::uuid IS NULL OR d.endpoint_id = $2) AND ($3::text IS NULL OR ev.type = $3)
          AND ($4::text IS NULL OR d.status = $4) AND ($5::bigint IS NULL OR d.seq < $5)
        ORDER BY d.seq DESC LIMIT $6`,
      [clientId, endpointId, eventType, status, after?.seq ?? null, limit + 1],
    );
    return this.cursors.page(rows, limit, scope, (last) => ({ seq: last.seq }), present);
  }

  /**
   * Sends a delivery again, now, with the same message id (a receiver that has it already can
   * tell). Refused for an endpoint that is off, and for an event the user has since taken from the
   * app (a dropped delivery stays dropped).
   */
  async redeliver(clientId: string, deliveryId: unknown): Promise<WebhookDeliveryView> {
    if (!isUuid(deliveryId)) throw new AppError('NOT_FOUND', 'No such webhook delivery', { field: 'deliveryId' });
    const [row]: Array<{ status: string; enabled: boolean }> = await this.dataSource.query(
      `SELECT d.status, e.enabled FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE d.id = $1 AND e.client_id = $2`,
      [deliveryId, clientId],
    );
    if (!row) throw new AppError('NOT_FOUND', 'No such webhook delivery', { field: 'deliveryId' });
    if (!row.enabled) throw new AppError('CONFLICT', 'The endpoint is turned off: turn it on first, then redeliver');
    if (row.status === 'DROPPED')
      throw new AppError('CONFLICT', 'The user disconnected the app before this event was sent; it is not sent');
    await this.dataSource.query(
      `UPDATE webhook_deliveries SET status = 'PENDING', attempts = 0, next_attempt_at = now(), leased_until = NULL
        WHERE id = $1 AND (status <> 'PENDING' OR leased_until IS NULL OR leased_until < now())`,
      [deliveryId],
    );
    const [updated]: DeliveryRow[] = await this.dataSource.query(`${SELECT_DELIVERIES} WHERE d.id = $1`, [deliveryId]);
    return present(updated!);
  }
}
