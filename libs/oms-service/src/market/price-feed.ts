import { createHash } from 'node:crypto';
import Decimal from 'decimal.js';
import type { DataSource } from 'typeorm';
import type { Logger } from '@trading/logging';
import { startPeriodic, type PeriodicTask } from '@trading/service';

/**
 * The paper market's price feed: a seeded random walk. Step n of an instrument moves its price
 * by a normal draw whose randomness comes only from (seed, symbol, n), so the same seed and
 * start prices give the same prices step by step, in any process. Prices stay on the tick.
 * The step counter lives in the database, so several OMS instances share one clock.
 */
export class PriceFeed {
  private task: PeriodicTask | undefined;

  constructor(
    private readonly dataSource: DataSource,
    private readonly options: { seed: number; volatility: string; tickMs: number },
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.options.tickMs <= 0) return;
    this.task ??= startPeriodic('price feed', this.options.tickMs, () => this.step(), this.logger);
  }

  async stop(): Promise<void> {
    await this.task?.stop();
    this.task = undefined;
  }

  /** Moves every instrument `steps` steps; returns the new clock. */
  async step(steps = 1): Promise<number> {
    let clock = 0;
    for (let i = 0; i < steps; i++) {
      clock = await this.dataSource.transaction(async (tx) => {
        const [[{ step }]] = await tx.query(
          'UPDATE market_clock SET step = step + 1, updated_at = now() WHERE id = 1 RETURNING step::int AS step',
        );
        const rows: Array<{ symbol: string; last_price: string; tick_size: string }> = await tx.query(
          'SELECT symbol, last_price, tick_size FROM instruments WHERE tradable ORDER BY symbol FOR UPDATE',
        );
        for (const row of rows) {
          const next = nextPrice(row.last_price, row.tick_size, draw(this.options.seed, row.symbol, step), this.options.volatility);
          await tx.query('UPDATE instruments SET last_price = $2 WHERE symbol = $1', [row.symbol, next]);
        }
        return step as number;
      });
    }
    return clock;
  }

  /** Sets one price (on the tick); for tests and operators. */
  async setPrice(symbol: string, price: string): Promise<void> {
    const res = await this.dataSource.query('UPDATE instruments SET last_price = $2 WHERE symbol = $1 RETURNING symbol', [
      symbol,
      new Decimal(price).toFixed(),
    ]);
    if (!res[0]?.length) throw new Error(`no instrument ${symbol}`);
  }
}

/** A standard normal draw from (seed, symbol, step) alone (Box–Muller on a hash). */
export function draw(seed: number, symbol: string, step: number): number {
  const h = createHash('sha256').update(`${seed}:${symbol}:${step}`).digest();
  const u1 = (h.readUInt32BE(0) + 1) / 4294967297;
  const u2 = h.readUInt32BE(4) / 4294967296;
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

export function nextPrice(last: string, tick: string, z: number, volatility: string): string {
  const move = new Decimal(z.toFixed(8)).times(volatility);
  const raw = new Decimal(last).times(new Decimal(1).plus(move));
  const ticks = Decimal.max(raw.div(tick).toDecimalPlaces(0, Decimal.ROUND_HALF_UP), 1);
  return ticks.times(tick).toFixed();
}
