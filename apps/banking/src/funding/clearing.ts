import type { Logger } from '@trading/logging';
import type { FundingService } from './funding.service';

/**
 * Simulated clearing: every `pollMs` settles the pending funding transactions whose delay has
 * passed. Safe with several instances (the service claims rows with SKIP LOCKED).
 */
export class ClearingWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly funding: FundingService,
    private readonly pollMs: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.schedule();
  }

  /** Stops polling and waits for a pass in progress, so the database can close after it. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.funding
        .clearDue()
        .then((n) => {
          if (n) this.logger.debug({ settled: n }, 'clearing settled funding transactions');
        })
        .catch((err) => this.logger.error({ err }, 'clearing pass failed'))
        .finally(() => this.schedule());
    }, this.pollMs);
    this.timer.unref();
  }
}
