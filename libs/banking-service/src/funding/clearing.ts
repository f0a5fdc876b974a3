import type { Logger } from '@trading/logging';
import { startPeriodic, type PeriodicTask } from '@trading/service';
import type { FundingService } from './funding.service';

/**
 * Simulated clearing: every `pollMs` settles the pending funding transactions whose delay has
 * passed, and sales whose settlement date has come. Safe with several instances (rows are
 * claimed with SKIP LOCKED).
 */
export class ClearingWorker {
  private task: PeriodicTask | undefined;

  constructor(
    private readonly funding: FundingService,
    private readonly pollMs: number,
    private readonly logger: Logger,
    private readonly sales?: { settleDue(): Promise<number> },
  ) {}

  start(): void {
    this.task ??= startPeriodic('clearing', this.pollMs, () => this.pass(), this.logger);
  }

  /** Stops polling and waits for a pass in progress, so the database can close after it. */
  async stop(): Promise<void> {
    await this.task?.stop();
  }

  private async pass(): Promise<void> {
    const n = await this.funding.clearDue();
    if (n) this.logger.debug({ settled: n }, 'clearing settled funding transactions');
    const sales = (await this.sales?.settleDue()) ?? 0;
    if (sales) this.logger.debug({ settled: sales }, 'sale proceeds settled');
  }
}
