import { createHash } from 'node:crypto';
import Decimal from 'decimal.js';
import type { DataSource } from 'typeorm';
import type { Logger } from '@trading/logging';
import { startPeriodic, type PeriodicTask } from '@trading/service';
import type { QuoteSource } from '../market-data/quote';
import { simulatedVolume, type MarketTicks, type Tick } from '../market-data/ticks';

/**
 * The paper market's price feed: a seeded random walk. Step n of an instrument moves its price
 * by a normal draw whose randomness comes only from (seed, symbol, n), so the same seed and
 * start prices give the same prices step by step, in any process. Prices stay on the tick.
 * The step counter lives in the database, so several OMS instances share one clock.
 * With `ticks`, every price it sets is also kept as a tick (market_ticks, for bars) with a
 * simulated volume, and published for live quotes; old ticks are pruned hourly.
 */
export class PriceFeed {
  private task: PeriodicTask | undefined;
  private pruning: PeriodicTask | undefined;

  constructor(
    private readonly dataSource: DataSource,
    private readonly options: { seed: number; volatility: string; tickMs: number },
    private readonly logger: Logger,
    readonly ticks?: MarketTicks,
    /** Told the symbols it repriced once the change has committed (this instance's instruments cache forgets them). */
    private readonly repriced?: (symbols: readonly string[]) => void,
  ) {}

  start(): void {
    const ticks = this.ticks;
    if (ticks) this.pruning ??= startPeriodic('market tick retention', 3_600_000, () => ticks.prune(this.dataSource), this.logger);
    if (this.options.tickMs <= 0) return;
    this.task ??= startPeriodic('price feed', this.options.tickMs, () => this.step(), this.logger);
  }

  async stop(): Promise<void> {
    await this.task?.stop();
    await this.pruning?.stop();
    this.task = undefined;
    this.pruning = undefined;
  }

  /** Moves every instrument `steps` steps; returns the new clock. */
  async step(steps = 1): Promise<number> {
    let clock = 0;
    for (let i = 0; i < steps; i++) {
      const changed: QuoteSource[] = [];
      clock = await this.dataSource.transaction(async (tx) => {
        const [[{ step, at }]] = await tx.query(
          'UPDATE market_clock SET step = step + 1, updated_at = now() WHERE id = 1 RETURNING step::int AS step, now() AS at',
        );
        // FOR NO KEY UPDATE, not FOR UPDATE: a new order's foreign key takes KEY SHARE on its
        // instrument, which FOR UPDATE would block for the whole step; this still keeps a price
        // set meanwhile (an operator's, a test's) from being lost under the step's.
        const rows: Array<{ symbol: string; last_price: string; tick_size: string; lot_size: string; currency: string }> = await tx.query(
          'SELECT symbol, last_price, tick_size, lot_size, currency FROM instruments WHERE tradable ORDER BY symbol FOR NO KEY UPDATE',
        );
        const ticks: Tick[] = [];
        for (const row of rows) {
          const next = nextPrice(row.last_price, row.tick_size, draw(this.options.seed, row.symbol, step), this.options.volatility);
          ticks.push({ symbol: row.symbol, price: next, volume: simulatedVolume(this.options.seed, row.symbol, step, row.lot_size), at });
          changed.push({
            symbol: row.symbol,
            currency: row.currency,
            lastPrice: next,
            tickSize: row.tick_size,
            lotSize: row.lot_size,
            priceAt: at,
          });
        }
        // One statement for every instrument: the step's locks are held for a few round trips, not one per instrument.
        if (ticks.length)
          await tx.query(
            `UPDATE instruments i SET last_price = n.price, price_at = $3
             FROM unnest($1::text[], $2::numeric[]) AS n(symbol, price) WHERE i.symbol = n.symbol`,
            [ticks.map((t) => t.symbol), ticks.map((t) => t.price), at],
          );
        await this.ticks?.record(tx, ticks);
        return step as number;
      });
      this.repriced?.(changed.map((c) => c.symbol));
      await this.ticks?.publish(changed);
    }
    return clock;
  }

  /** Sets one price (on the tick); for tests and operators. Kept as a tick with no volume (nothing traded). */
  async setPrice(symbol: string, price: string): Promise<void> {
    const changed = await this.dataSource.transaction(async (tx) => {
      const [rows]: [Array<{ tick_size: string; lot_size: string; currency: string; at: Date }>] = await tx.query(
        'UPDATE instruments SET last_price = $2, price_at = now() WHERE symbol = $1 RETURNING tick_size, lot_size, currency, price_at AS at',
        [symbol, new Decimal(price).toFixed()],
      );
      const row = rows[0];
      if (!row) throw new Error(`no instrument ${symbol}`);
      await this.ticks?.record(tx, [{ symbol, price: new Decimal(price).toFixed(), volume: '0', at: row.at }]);
      return { symbol, currency: row.currency, lastPrice: price, tickSize: row.tick_size, lotSize: row.lot_size, priceAt: row.at };
    });
    this.repriced?.([symbol]);
    await this.ticks?.publish([changed]);
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
