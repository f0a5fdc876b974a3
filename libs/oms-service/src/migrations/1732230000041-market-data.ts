import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Market data: every price the feed sets is kept as a tick (price, volume, time) for OHLCV bars,
 * pruned after OMS_MARKET_TICK_RETENTION_DAYS; each instrument says when its price last changed
 * (a quote's timestamp).
 */
export class MarketData1732230000041 implements MigrationInterface {
  name = 'MarketData1732230000041';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE instruments ADD COLUMN price_at timestamptz NOT NULL DEFAULT now()');
    await q.query(`
      CREATE TABLE market_ticks (
        id bigserial PRIMARY KEY,
        symbol text NOT NULL,
        price numeric(20, 8) NOT NULL CHECK (price > 0),
        volume numeric(20, 8) NOT NULL CHECK (volume >= 0),
        at timestamptz NOT NULL
      )`);
    // Bars read one symbol over a time range; the retention prunes by time alone.
    await q.query('CREATE INDEX market_ticks_symbol_at ON market_ticks (symbol, at, id)');
    await q.query('CREATE INDEX market_ticks_at ON market_ticks (at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE market_ticks');
    await q.query('ALTER TABLE instruments DROP COLUMN price_at');
  }
}
