/** A consumer group worker on a stream. */
import { hostname } from 'node:os';
import type { Logger } from '@trading/logging';
import { inSpan } from '@trading/tracing';
import { deadLetterStream } from './dead-letters';
import type { DeliveredEvent, EventLog } from './event-log';

export interface ConsumerOptions {
  log: EventLog;
  stream: string;
  group: string;
  /** Defaults to `<group>@<host>:<pid>`, so an in-process restart finds its own pending entries at once. */
  consumer?: string;
  logger: Logger;
  /**
   * Applies one event. It must be idempotent by `eventId` and commit before resolving: the
   * entry is acked only afterwards, so a crash in between re-delivers an event the handler then skips.
   */
  handle(event: DeliveredEvent): Promise<void>;
  /**
   * Checked before `handle`: the reason an event must never be applied (bad signature, not the
   * contract's shape), or null. A refused event goes to `<stream>:dead-letter` with the reason
   * and is acked, so it neither blocks the stream nor is ever booked.
   */
  refuse?(event: DeliveredEvent): string | null;
  /**
   * Applies a whole batch at once instead of `handle` one by one (fewer round trips where the
   * events are independent and one statement can record them all). The same rules: idempotent by
   * `eventId`, committed before it resolves; the batch is acked only afterwards, all together.
   */
  handleBatch?(events: DeliveredEvent[]): Promise<void>;
  /** Told of every dead-lettered event (metrics). */
  onDeadLetter?(reason: string): void;
  /**
   * Event types of the contract this group books nothing from (e.g. `order.updated`, for clients'
   * live events): acked together, unchecked and unhandled — a forged one could change nothing,
   * and checking every order's signature in every group cost each a share of a core under load.
   */
  ignores?: readonly string[];
  batchSize?: number;
  blockMs?: number;
  /**
   * Entries another consumer left unacked this long are taken over (default 5 s): it died
   * mid-batch. Checked about once a second, so a dead consumer's events are applied within
   * this plus a second. A live but slow consumer's entry taken over is applied once all the same
   * (handlers deduplicate on the event id in the transaction that applies it).
   */
  claimIdleMs?: number;
}

const DEFAULT_CLAIM_IDLE_MS = 5000;

/** `<group>@<host>:<pid>`: an in-process restart finds its own pending entries at once. */
export const defaultConsumerName = (group: string) => `${group}@${hostname()}:${process.pid}`;

/** A consumer-group worker: pending first, then stale entries of dead consumers, then new ones. */
export class StreamConsumer {
  private running = false;
  private aborted = false;
  private loop: Promise<void> | undefined;
  readonly consumer: string;

  constructor(private readonly options: ConsumerOptions) {
    this.consumer = options.consumer ?? defaultConsumerName(options.group);
  }

  async start(): Promise<void> {
    await this.options.log.ensureGroup(this.options.stream, this.options.group);
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  /**
   * Stops the way a crash would, for crash tests: returns at once, acks nothing more (the event
   * being handled stays pending, whether or not its transaction commits) and handles nothing
   * else it has read. The loop ends by itself within a turn; `stop()` waits for that.
   */
  abort(): void {
    this.aborted = true;
    this.running = false;
  }

  /** Keeps a refused event, with why and who refused it, where an operator can look at it. */
  private async deadLetter(event: DeliveredEvent, reason: string): Promise<void> {
    const { log, stream, group, logger } = this.options;
    logger.error(
      { stream, group, entryId: event.entryId, eventId: event.eventId, type: event.type, reason },
      'settlement event refused; moved to the dead-letter stream',
    );
    this.options.onDeadLetter?.(reason);
    await log.append(deadLetterStream(stream), {
      eventId: event.eventId || `unknown-${event.entryId}`,
      type: 'dead-letter',
      payload: {
        reason,
        group,
        entryId: event.entryId,
        type: event.type,
        payload: event.payloadJson ?? JSON.stringify(event.payload),
        signature: event.signature ?? null,
        at: new Date().toISOString(),
      },
    });
  }

  private async run(): Promise<void> {
    const count = this.options.batchSize ?? 50;
    const lastClaim = { at: 0 };
    while (this.running) {
      try {
        await this.apply(await this.nextBatch(count, lastClaim));
      } catch (err) {
        if (this.aborted) break;
        await this.recover(err);
      }
    }
  }

  /** This consumer's pending entries; else, about once a second, dead consumers' stale ones; else new ones. */
  private async nextBatch(count: number, lastClaim: { at: number }): Promise<DeliveredEvent[]> {
    const { log, stream, group } = this.options;
    let batch = await log.read(stream, group, this.consumer, { count, blockMs: 0, pending: true });
    if (!batch.length && Date.now() - lastClaim.at > 1000) {
      lastClaim.at = Date.now();
      batch = await log.claimStale(stream, group, this.consumer, this.options.claimIdleMs ?? DEFAULT_CLAIM_IDLE_MS, count);
    }
    if (!batch.length)
      batch = await log.read(stream, group, this.consumer, { count, blockMs: this.options.blockMs ?? 500, pending: false });
    return batch;
  }

  /** Applies (or dead-letters) each event and acks it; the ignored types are acked together at the end. */
  private async apply(batch: DeliveredEvent[]): Promise<void> {
    if (this.options.handleBatch) return this.applyAll(batch, this.options.handleBatch);
    const { log, stream, group } = this.options;
    const ignored: string[] = [];
    for (const event of batch) {
      if (!this.running) break;
      if (this.options.ignores?.includes(event.type)) {
        ignored.push(event.entryId);
        continue;
      }
      await this.applyOne(event);
      if (this.aborted) break;
      await log.ack(stream, group, [event.entryId]);
    }
    if (ignored.length && !this.aborted) await log.ack(stream, group, ignored);
  }

  /** The batch handler's way: refused events dead-lettered, the rest applied together, then every entry acked at once. */
  private async applyAll(batch: DeliveredEvent[], handleBatch: (events: DeliveredEvent[]) => Promise<void>): Promise<void> {
    const { log, stream, group } = this.options;
    const accepted: DeliveredEvent[] = [];
    for (const event of batch) {
      if (this.options.ignores?.includes(event.type)) continue;
      const reason = this.options.refuse?.(event) ?? null;
      if (reason) await this.deadLetter(event, reason);
      else accepted.push(event);
    }
    if (accepted.length) await inSpan(`${group} apply ${accepted.length} events`, { kind: 'consumer' }, () => handleBatch(accepted));
    if (batch.length && !this.aborted)
      await log.ack(
        stream,
        group,
        batch.map((e) => e.entryId),
      );
  }

  private async applyOne(event: DeliveredEvent): Promise<void> {
    const { stream, group } = this.options;
    // Applying an event continues the trace of the change that produced it (a fill's trace reaches banking and accounts).
    await inSpan(
      `${group} apply ${event.type}`,
      {
        traceparent: event.traceparent,
        kind: 'consumer',
        attributes: { 'messaging.destination.name': stream, 'event.id': event.eventId },
      },
      async () => {
        const reason = this.options.refuse?.(event) ?? null;
        if (reason) await this.deadLetter(event, reason);
        else await this.options.handle(event);
      },
    );
  }

  /** After a failed turn: the group made again if it was lost, then a pause before the next. */
  private async recover(err: unknown): Promise<void> {
    const { log, stream, group, logger } = this.options;
    // The stream or the group was lost (Redis restarted empty, or someone deleted it): make it again.
    if (/NOGROUP/.test(String((err as Error)?.message))) await log.ensureGroup(stream, group).catch(() => undefined);
    // Unacked entries stay pending and come back on the next turn.
    logger.error({ err, stream, group }, 'event consumer turn failed; retrying');
    await new Promise((r) => setTimeout(r, 500));
  }
}
