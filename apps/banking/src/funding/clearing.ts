import type { Logger } from '@trading/logging';
import type { FundingService } from './funding.service';

/**
 * Simulated clearing: every `pollMs` settles the pending funding transactions whose delay has
 * passed, and sales whose settlement date has come. Safe with several instances (rows are
 * claimed with SKIP LOCKED).
 */
export class ClearingWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly funding: FundingService,
    private readonly pollMs: number,
    private readonly logger: Logger,
    private readonly sales?: { settleDue(): Promise<number> },
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
        .then(async (n) => {
          if (n) this.logger.debug({ settled: n }, 'clearing settled funding transactions');
          const sales = (await this.sales?.settleDue()) ?? 0;
          if (sales) this.logger.debug({ settled: sales }, 'sale proceeds settled');
        })
        .catch((err) => this.logger.error({ err }, 'clearing pass failed'))
        .finally(() => this.schedule());
    }, this.pollMs);
    this.timer.unref();
  }
}
