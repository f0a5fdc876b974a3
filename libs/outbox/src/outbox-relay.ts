import type { KeyObject } from 'node:crypto';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { DataSource, EntityManager } from 'typeorm';
import { signEvent, type EventLog } from '@trading/events';
import type { Logger } from '@trading/logging';
import { startPeriodic, type PeriodicTask } from '@trading/service';

/**
 * How far back a stream that lost entries is made whole again. Consumers that were further behind
 * than this had long since paged (SettlementConsumerBehind); publishing more would only grow the
 * stream towards its trim length while they catch up.
 */
const REPUBLISH_WINDOW = '24 hours';
/** How often an idle relay checks the stream for lost entries (a relay with rows to send checks first, every pass). */
const IDLE_CHECK_MS = 1000;

interface PendingRow {
  seq: string;
  event_id: string;
  type: string;
  payload: Record<string, unknown>;
  created_at: Date;
  trace_context: string | null;
}

/**
 * Publishes a service's outbox rows (its `outbox` table, written in the same transaction as the
 * change each announces) to the settlement stream in outbox order, then marks them published with
 * the entry id the stream gave each. A crash between the publish and the mark publishes a row
 * again: consumers deduplicate on the event id, so that costs nothing. One relay publishes at a
 * time across every instance of the service (a transaction-scoped advisory lock, which PostgreSQL
 * keeps per database, so each service's relay only waits for its own; the others skip that pass),
 * so the stream holds the rows in outbox order. Each service has its own database, hence its own
 * `outbox` and `outbox_stream_position` tables.
 *
 * Redis acknowledges an entry before it is durable. If it comes back without entries it had
 * accepted (restarted empty, an append-only file that lost its last second, a failover to a
 * replica behind, the stream deleted), the relay finds out before it sends anything (and once a
 * second while idle): it checks that the newest entry it published is still there; when it is not, the rows the stream lost are marked unpublished and
 * go out again, in order, before anything newer.
 */
export class OutboxRelay {
  private task: PeriodicTask | undefined;
  /** When the relay last checked the stream for lost entries. */
  private checkedAt = 0;
  /** When the relay last said it may not read the stream (once a minute, not every pass). */
  private refusedReadLoggedAt = 0;

  constructor(
    private readonly dataSource: DataSource,
    private readonly events: EventLog,
    private readonly stream: string,
    private readonly intervalMs: number,
    private readonly logger: Logger,
    /** The producing service's own key: consumers tell by it who wrote each event. */
    private readonly signingKey: { kid: string; privateKey: KeyObject },
    /** Told how many rows went out again after the stream lost them (metrics). */
    private readonly onRepublish: (rows: number) => void = () => undefined,
  ) {}

  /** A pass now (events just written, e.g. an engine pass's fills), not at the next interval. */
  wake(): void {
    this.task?.wake();
  }

  start(): void {
    this.task ??= startPeriodic('outbox relay', this.intervalMs, () => this.publishPending(), this.logger);
  }

  async stop(): Promise<void> {
    await this.task?.stop();
    this.task = undefined;
  }

  /** Publishes what is waiting; returns how many rows went out. */
  async publishPending(batch = 200): Promise<number> {
    // Most passes of an idle relay find nothing: one statement on the partial index of unpublished
    // rows says so, instead of a transaction's four round trips. The stream is still checked for
    // lost entries once a second, which needs the transaction (and its lock) whatever is pending.
    if (Date.now() - this.checkedAt < IDLE_CHECK_MS && !(await this.anyPending())) return 0;
    let total = 0;
    for (let first = true; ; first = false) {
      const n = await this.dataSource.transaction(async (tx) => {
        const [{ mine }] = await tx.query("SELECT pg_try_advisory_xact_lock(hashtext('outbox-relay')) AS mine");
        if (!mine) return 0; // another instance is publishing: the next pass looks again
        const pending = (): Promise<PendingRow[]> =>
          tx.query(
            `SELECT seq, event_id, type, payload, created_at, trace_context FROM outbox
             WHERE published_at IS NULL ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED`,
            [batch],
          );
        let rows = await pending();
        // Checked before anything goes out; while there is nothing to send, once a second is enough.
        if (first && (rows.length || Date.now() - this.checkedAt >= IDLE_CHECK_MS)) {
          this.checkedAt = Date.now();
          // What the stream lost comes before the pending rows: read them again, lost rows first.
          if (await this.recoverLostEntries(tx)) rows = await pending();
        }
        // Sent together, not one round trip per row: one connection keeps them in this order, so
        // the stream holds them in outbox order as before.
        const entryIds = await Promise.all(
          rows.map((row) => {
            const event = {
              eventId: row.event_id,
              type: row.type,
              payload: { ...row.payload, eventId: row.event_id, type: row.type, occurredAt: new Date(row.created_at).toISOString() },
            };
            const signed = signEvent(event, this.signingKey);
            // The trace travels beside the signed event, not in it: it says where to look, never what to book.
            return this.events.append(this.stream, row.trace_context ? { ...signed, traceparent: row.trace_context } : signed);
          }),
        );
        if (!rows.length) return 0;
        await tx.query(
          `UPDATE outbox SET published_at = now(), stream_entry_id = v.entry_id
             FROM unnest($1::bigint[], $2::text[]) AS v(seq, entry_id) WHERE outbox.seq = v.seq`,
          [rows.map((r) => r.seq), entryIds],
        );
        await tx.query(
          `INSERT INTO outbox_stream_position (stream, seq, entry_id) VALUES ($1, $2, $3)
             ON CONFLICT (stream) DO UPDATE SET seq = EXCLUDED.seq, entry_id = EXCLUDED.entry_id`,
          [this.stream, rows[rows.length - 1]!.seq, entryIds[entryIds.length - 1]],
        );
        return rows.length;
      });
      total += n;
      if (n < batch) return total;
    }
  }

  /** Whether any row waits to be published (a row committed just after this is the next pass's). */
  private async anyPending(): Promise<boolean> {
    const [{ pending }] = await this.dataSource.query('SELECT EXISTS (SELECT 1 FROM outbox WHERE published_at IS NULL) AS pending');
    return pending === true;
  }

  /**
   * When the stream no longer reaches the newest entry this relay recorded, marks every row
   * published after the stream's last entry (within REPUBLISH_WINDOW) unpublished again. Rows went
   * out in outbox order, so what was lost is exactly that tail.
   */
  private async recoverLostEntries(tx: EntityManager): Promise<boolean> {
    const [position]: Array<{ entry_id: string }> = await tx.query('SELECT entry_id FROM outbox_stream_position WHERE stream = $1', [
      this.stream,
    ]);
    if (!position) return false;
    let last: string;
    try {
      // Where the stream's history ends at or before the entry recorded last: banking and the OMS
      // both publish here, so the newest entry may be another producer's, added since a loss.
      last = await this.events.lastIdAtOrBefore(this.stream, position.entry_id);
    } catch (err) {
      // A Redis user set up before the relay read its stream (ACL): publish as before, and say what to grant.
      if (!/NOPERM/.test(String((err as Error)?.message))) throw err;
      if (Date.now() - this.refusedReadLoggedAt < 60_000) return false;
      this.refusedReadLoggedAt = Date.now();
      this.logger.error(
        { err, stream: this.stream },
        "cannot read the settlement stream to check it lost nothing: grant this service's Redis user read on it",
      );
      return false;
    }
    if (last === position.entry_id) return false;
    const [ms, seq] = last.split('-');
    const [{ n: lost }]: Array<{ n: number }> = await tx.query(
      `WITH lost AS (
         UPDATE outbox SET published_at = NULL, stream_entry_id = NULL
          WHERE stream_entry_id IS NOT NULL AND published_at >= now() - $3::interval
            AND (split_part(stream_entry_id, '-', 1)::numeric, split_part(stream_entry_id, '-', 2)::numeric) > ($1::numeric, $2::numeric)
          RETURNING 1)
       SELECT count(*)::int AS n FROM lost`,
      [ms, seq, REPUBLISH_WINDOW],
    );
    await tx.query('DELETE FROM outbox_stream_position WHERE stream = $1', [this.stream]);
    this.logger.warn(
      { stream: this.stream, streamLastEntry: last, recordedEntry: position.entry_id, republishing: lost },
      'the settlement stream lost entries it had accepted (Redis restarted or failed over); publishing them again',
    );
    this.onRepublish(lost);
    return lost > 0;
  }
}

/**
 * Events written and not yet on the stream: growing means the relay (or Redis) is stuck, and the
 * stream's readers fall behind. Named after the producing service (`oms_outbox_backlog`,
 * `banking_outbox_backlog`). Returns what the relay reports rows it had to publish again with.
 */
export function outboxMetrics(registry: Registry, dataSource: DataSource, service: string): (rows: number) => void {
  const republished = new Counter({
    name: `${service}_outbox_republished_total`,
    help: 'Outbox rows published again because the settlement stream lost them (Redis restarted or failed over without them)',
    registers: [registry],
  });
  new Gauge({
    name: `${service}_outbox_backlog`,
    help: 'Outbox rows not yet published to the settlement stream',
    // A count of the database's, the same in every process: processes that answer one scrape together take it once.
    aggregator: 'max',
    registers: [registry],
    async collect() {
      // Counted on the partial index of unpublished rows: cheap however long the outbox grows.
      const [row] = await dataSource.query('SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL').catch(() => [{ n: NaN }]);
      this.set(Number(row?.n ?? NaN)); // NaN: unknown (the database is away), not a backlog of -1
    },
  });
  return (rows) => republished.inc(rows);
}
