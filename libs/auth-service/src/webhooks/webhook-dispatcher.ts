import type { DataSource } from '@trading/db';
import type { Logger } from '@trading/logging';
import { startPeriodic, type PeriodicTask } from '@trading/service';
import { messageIdOf, WEBHOOK_EVENTS, type WebhookEventType } from '@trading/webhooks';
import { enqueueMail } from '../mail/outbox';
import type { Environment } from '../registry/vendor-apps';
import type { EndpointRow, WebhookEndpoints } from './webhook-endpoints';
import { signatureHeaders, type WebhookSender } from './sending';

export interface DispatchSettings {
  environment: Environment;
  /** How often due deliveries are looked for (a new event wakes the dispatcher sooner). */
  pollMs: number;
  /** How long a claimed batch is this instance's; a crashed instance's batch is taken over after it. */
  leaseMs: number;
  /** The waits between attempts; after the last, the delivery is given up (FAILED). */
  retryScheduleMs: readonly number[];
  /** An endpoint that has failed every attempt this long is turned off, and the vendor told. */
  disableAfterMs: number;
  /** Deliveries an endpoint's lane claims at a time, sent one after another in the order they happened. */
  batchSize: number;
}

interface ClaimedDelivery {
  id: string;
  attempts: number;
  event_id: string;
  type: WebhookEventType;
  user_id: string;
  account_id: string | null;
  data: Record<string, unknown>;
  occurred_at: Date;
}

/**
 * Sends queued deliveries. Each endpoint has its own lane: one batch at a time, in the order
 * the events happened, so a slow or dead endpoint holds up nothing but itself. Lanes are claimed
 * in PostgreSQL (the endpoint's row locked while claiming, skipped when locked or while another
 * instance's lease on it runs), so any number of instances share the work and each delivery is
 * in flight at one place at a time. At least once: a crash after the receiver answered and before
 * the answer is recorded sends it again after the lease, with the same `webhook-id`.
 */
export class WebhookDispatcher {
  private task: PeriodicTask | undefined;
  private readonly lanes = new Map<string, Promise<void>>();
  private aborted = false;

  constructor(
    private readonly db: DataSource,
    private readonly endpoints: WebhookEndpoints,
    private readonly http: WebhookSender,
    private readonly settings: DispatchSettings,
    private readonly logger: Logger,
    /** The user as an app's ID tokens name them (grant.revoked carries it, never the internal id). */
    private readonly subjectFor: (clientId: string, userId: string) => Promise<string | null>,
  ) {}

  start(): void {
    this.aborted = false;
    this.task ??= startPeriodic('webhook dispatcher', this.settings.pollMs, () => this.pass(), this.logger);
  }

  wake(): void {
    this.task?.wake();
  }

  /** Stops claiming and waits for the lanes in flight to finish their current batch. */
  async stop(): Promise<void> {
    await this.task?.stop();
    this.task = undefined;
    this.aborted = true;
    await Promise.allSettled([...this.lanes.values()]);
  }

  /** Stops as a crash would: nothing more is sent or recorded; claimed deliveries wait for their lease to run out. */
  abort(): void {
    this.aborted = true;
    void this.task?.stop();
    this.task = undefined;
  }

  /** Starts a lane for every endpoint with a due delivery that has none running here. */
  async pass(): Promise<void> {
    const due: Array<{ endpoint_id: string }> = await this.db.query(
      `SELECT DISTINCT d.endpoint_id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.status = 'PENDING' AND d.next_attempt_at <= now() AND (d.leased_until IS NULL OR d.leased_until < now())
          AND e.enabled AND e.environment = $1
        LIMIT 500`,
      [this.settings.environment],
    );
    for (const { endpoint_id: id } of due) {
      if (this.lanes.has(id) || this.aborted) continue;
      const lane = this.runLane(id)
        .catch((err: unknown) => this.logger.error({ err, endpointId: id }, 'webhook lane failed; it is tried again on the next pass'))
        .finally(() => this.lanes.delete(id));
      this.lanes.set(id, lane);
    }
  }

  private async runLane(endpointId: string): Promise<void> {
    for (;;) {
      const claimed = await this.claim(endpointId);
      if (!claimed) return;
      for (const delivery of claimed.deliveries) {
        if (this.aborted) return;
        await this.deliver(claimed.endpoint, delivery);
      }
    }
  }

  /** The endpoint's next due batch, leased to this instance; null when there is none or another instance has the lane. */
  private async claim(endpointId: string): Promise<{ endpoint: EndpointRow; deliveries: ClaimedDelivery[] } | null> {
    if (this.aborted) return null;
    return this.db.transaction(async (tx) => {
      const [endpoint]: EndpointRow[] = await tx.query(`SELECT * FROM webhook_endpoints WHERE id = $1 AND enabled FOR UPDATE SKIP LOCKED`, [
        endpointId,
      ]);
      if (!endpoint) return null;
      const inFlight: unknown[] = await tx.query(
        `SELECT 1 FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'PENDING' AND leased_until >= now() LIMIT 1`,
        [endpointId],
      );
      if (inFlight.length) return null;
      const deliveries: ClaimedDelivery[] = await tx.query(
        `WITH batch AS (
           SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'PENDING' AND next_attempt_at <= now()
            ORDER BY seq LIMIT $2
         ), leased AS (
           UPDATE webhook_deliveries d SET leased_until = now() + make_interval(secs => $3::double precision / 1000)
             FROM batch WHERE d.id = batch.id RETURNING d.id, d.seq, d.attempts, d.event_id
         )
         SELECT leased.id, leased.attempts, ev.id AS event_id, ev.type, ev.user_id, ev.account_id, ev.data, ev.occurred_at
           FROM leased JOIN webhook_events ev ON ev.id = leased.event_id ORDER BY leased.seq`,
        [endpointId, this.settings.batchSize, this.settings.leaseMs],
      );
      return deliveries.length ? { endpoint, deliveries } : null;
    });
  }

  /** One attempt: dropped if the user's grant no longer covers it, else signed, sent and recorded. */
  private async deliver(endpoint: EndpointRow, delivery: ClaimedDelivery): Promise<void> {
    if (delivery.type !== 'grant.revoked' && !(await this.stillGranted(endpoint, delivery))) {
      await this.db.query(
        `UPDATE webhook_deliveries SET status = 'DROPPED', leased_until = NULL, last_error = $2 WHERE id = $1 AND status = 'PENDING'`,
        [delivery.id, 'the user disconnected the app (or narrowed its scopes or accounts) before it was sent'],
      );
      return;
    }
    const body = JSON.stringify({
      id: messageIdOf(delivery.event_id),
      type: delivery.type,
      timestamp: new Date(delivery.occurred_at).toISOString(),
      data: await this.dataOf(endpoint, delivery),
    });
    const headers = signatureHeaders(this.endpoints.signingSecrets(endpoint), messageIdOf(delivery.event_id), new Date(), body);
    const result = await this.http.post(endpoint.url, { headers, body }, this.settings.environment);
    if (this.aborted) return; // a crash here: the answer is never recorded, and the lease runs out
    await this.record(endpoint, delivery, result);
  }

  private async dataOf(endpoint: EndpointRow, delivery: ClaimedDelivery): Promise<Record<string, unknown>> {
    if (delivery.type !== 'grant.revoked') return delivery.data;
    return { subject: await this.subjectFor(endpoint.client_id, delivery.user_id), ...delivery.data };
  }

  /** Whether the user still lets this app hear of the event: a live grant with the scope, reaching the account. */
  private async stillGranted(endpoint: EndpointRow, delivery: ClaimedDelivery): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      `SELECT 1 FROM oauth_grants g
        WHERE g.client_id = $1 AND g.user_id = $2 AND g.revoked_at IS NULL AND g.activated_at IS NOT NULL
          AND ($3::text IS NULL OR $3 = ANY (g.scope))
          AND ($4::uuid IS NULL OR g.account_ids IS NULL OR $4 = ANY (g.account_ids))
        LIMIT 1`,
      [endpoint.client_id, delivery.user_id, WEBHOOK_EVENTS[delivery.type].scope, delivery.account_id],
    );
    return rows.length > 0;
  }

  /** The attempt in the log; the delivery delivered, due again on the schedule, or given up; the endpoint's failure clock. */
  private async record(
    endpoint: EndpointRow,
    delivery: ClaimedDelivery,
    result: { status: number | null; durationMs: number; responseSnippet: string; error: string | null },
  ): Promise<void> {
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    const attempts = delivery.attempts + 1;
    const waitMs = this.settings.retryScheduleMs[attempts - 1];
    const status = ok ? 'DELIVERED' : waitMs === undefined ? 'FAILED' : 'PENDING';
    const attempt = [delivery.id, result.status, Math.round(result.durationMs), result.error, result.responseSnippet];
    const outcome = [attempts, status, ok ? null : (result.error ?? `answered ${result.status}`), waitMs ?? 0];
    // The attempt, the delivery's new state and (once it answers) the endpoint's health, in one statement.
    const recordAttempt = `WITH attempt AS (
        INSERT INTO webhook_attempts (delivery_id, status_code, duration_ms, error, response_snippet) VALUES ($1, $2, $3, $4, $5)
      ), delivery AS (
        UPDATE webhook_deliveries SET attempts = $6, status = $7, leased_until = NULL, last_status_code = $2, last_error = $8,
          delivered_at = CASE WHEN $7 = 'DELIVERED' THEN now() ELSE delivered_at END,
          next_attempt_at = now() + make_interval(secs => $9::double precision / 1000)
        WHERE id = $1
      )
      UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $10 AND $7 = 'DELIVERED' AND failing_since IS NOT NULL`;
    if (ok) {
      await this.db.query(recordAttempt, [...attempt, ...outcome, endpoint.id]);
      return;
    }
    await this.db.transaction(async (tx) => {
      await tx.query(recordAttempt, [...attempt, ...outcome, endpoint.id]);
      await this.countFailure(tx, endpoint);
    });
  }

  /** Starts the endpoint's failure clock; once it has run past the limit, turns the endpoint off and tells the vendor by mail. */
  private async countFailure(tx: Pick<DataSource, 'query'>, endpoint: EndpointRow): Promise<void> {
    const [disabled]: Array<{ url: string; business_email: string; app_name: string; environment: string }> = await tx.query(
      `WITH before AS (
         SELECT id, enabled, COALESCE(failing_since, now()) <= now() - make_interval(secs => $2::double precision / 1000) AS expired
           FROM webhook_endpoints WHERE id = $1 FOR UPDATE
       ), changed AS (
         UPDATE webhook_endpoints e SET failing_since = COALESCE(e.failing_since, now()),
                enabled = e.enabled AND NOT before.expired,
                disabled_reason = CASE WHEN e.enabled AND before.expired
                  THEN 'Every delivery failed for ' || $3 || '; turn it on again once it answers' ELSE e.disabled_reason END,
                updated_at = CASE WHEN e.enabled AND before.expired THEN now() ELSE e.updated_at END
           FROM before WHERE e.id = before.id
         RETURNING e.url, e.client_id, e.environment, before.enabled AND before.expired AS turned_off
       )
       SELECT changed.url, changed.environment, a.business_email, a.app_name
         FROM changed JOIN vendor_app_credentials c ON c.client_id = changed.client_id JOIN vendor_apps a ON a.id = c.app_id
        WHERE changed.turned_off`,
      [endpoint.id, this.settings.disableAfterMs, describeDuration(this.settings.disableAfterMs)],
    );
    if (!disabled) return;
    this.logger.warn({ endpointId: endpoint.id }, 'webhook endpoint turned off after failing for too long');
    await enqueueMail(tx as never, {
      to: disabled.business_email,
      subject: `${disabled.app_name}: a webhook endpoint was turned off`,
      body: [
        `Every delivery to your ${disabled.environment} webhook endpoint ${disabled.url} failed for ${describeDuration(this.settings.disableAfterMs)}, so it was turned off.`,
        'Its undelivered events are kept. Once the endpoint answers again, turn it on (PATCH /v1/webhooks/endpoints/{id} with "enabled": true)',
        'and send what it missed with POST /v1/webhooks/deliveries/{id}/redeliver; GET /v1/webhooks/deliveries lists every attempt.',
      ].join('\n'),
    });
  }
}

/** "3 days", "2 hours", "45 seconds": the failure limit in the vendor's mail. */
export function describeDuration(ms: number): string {
  const units: Array<[number, string]> = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
    [1000, 'second'],
  ];
  const [size, name] = units.find(([unit]) => ms >= unit && ms % unit === 0) ?? [1000, 'second'];
  const n = Math.round(ms / size);
  return `${n} ${name}${n === 1 ? '' : 's'}`;
}
