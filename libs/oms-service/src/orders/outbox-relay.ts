import type { KeyObject } from 'node:crypto';
import { Gauge, type Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { signEvent, type EventLog } from '@trading/events';
import type { Logger } from '@trading/logging';
import { startPeriodic, type PeriodicTask } from '@trading/service';

/**
 * Publishes outbox rows to the settlement stream in outbox order, then marks them published.
 * A crash between the publish and the mark publishes a row again: consumers deduplicate on
 * the event id, so that costs nothing. Rows are locked (SKIP LOCKED) while being published,
 * so several OMS instances can run a relay each.
 */
export class OutboxRelay {
  private task: PeriodicTask | undefined;

  constructor(
    private readonly dataSource: DataSource,
    private readonly events: EventLog,
    private readonly stream: string,
    private readonly intervalMs: number,
    private readonly logger: Logger,
    /** The OMS's own key: consumers apply only what it signed. */
    private readonly signingKey: { kid: string; privateKey: KeyObject },
  ) {}

  start(): void {
    this.task ??= startPeriodic('outbox relay', this.intervalMs, () => this.publishPending(), this.logger);
  }

  async stop(): Promise<void> {
    await this.task?.stop();
    this.task = undefined;
  }

  /** Publishes what is waiting; returns how many rows went out. */
  async publishPending(batch = 200): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.dataSource.transaction(async (tx) => {
        const rows: Array<{
          seq: string;
          event_id: string;
          type: string;
          payload: Record<string, unknown>;
          created_at: Date;
          trace_context: string | null;
        }> = await tx.query(
          `SELECT seq, event_id, type, payload, created_at, trace_context FROM outbox
           WHERE published_at IS NULL ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED`,
          [batch],
        );
        for (const row of rows) {
          const event = {
            eventId: row.event_id,
            type: row.type,
            payload: { ...row.payload, eventId: row.event_id, type: row.type, occurredAt: new Date(row.created_at).toISOString() },
          };
          const signed = signEvent(event, this.signingKey);
          // The trace travels beside the signed event, not in it: it says where to look, never what to book.
          await this.events.append(this.stream, row.trace_context ? { ...signed, traceparent: row.trace_context } : signed);
        }
        if (rows.length) await tx.query('UPDATE outbox SET published_at = now() WHERE seq = ANY($1::bigint[])', [rows.map((r) => r.seq)]);
        return rows.length;
      });
      total += n;
      if (n < batch) return total;
    }
  }
}

/** Settlement events written and not yet on the stream: growing means the relay (or Redis) is stuck, and banking and accounts fall behind. */
export function outboxMetrics(registry: Registry, dataSource: DataSource): void {
  new Gauge({
    name: 'oms_outbox_backlog',
    help: 'Outbox rows not yet published to the settlement stream',
    registers: [registry],
    async collect() {
      // Counted on the partial index of unpublished rows: cheap however long the outbox grows.
      const [row] = await dataSource.query('SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL').catch(() => [{ n: NaN }]);
      this.set(Number(row?.n ?? NaN)); // NaN: unknown (the database is away), not a backlog of -1
    },
  });
}
