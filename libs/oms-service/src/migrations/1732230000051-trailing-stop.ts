import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Trailing stops. The trail is a price distance or a percentage (exactly one);
 * `high_water_mark` is the best price seen since the order started working (the highest for a
 * sell, the lowest for a buy), and `stop_price` the stop it gives, both moved by the engine.
 */
export class TrailingStop1732230000051 implements MigrationInterface {
  name = 'TrailingStop1732230000051';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE orders
      ADD COLUMN trail_price numeric(20, 8) CHECK (trail_price > 0),
      ADD COLUMN trail_percent numeric(20, 8) CHECK (trail_percent > 0 AND trail_percent < 100),
      ADD COLUMN high_water_mark numeric(20, 8),
      DROP CONSTRAINT orders_type_check,
      ADD CONSTRAINT orders_type_check CHECK (type IN ('MARKET', 'LIMIT', 'STOP', 'STOP_LIMIT', 'TRAILING_STOP')),
      ADD CONSTRAINT orders_trail_check CHECK ((type = 'TRAILING_STOP') = ((trail_price IS NULL) <> (trail_percent IS NULL)))`);
    await q.query(
      "CREATE INDEX orders_trailing_idx ON orders (symbol) WHERE type = 'TRAILING_STOP' AND triggered_at IS NULL AND status IN ('NEW', 'PARTIALLY_FILLED')",
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX orders_trailing_idx');
    await q.query(`ALTER TABLE orders DROP CONSTRAINT orders_trail_check, DROP CONSTRAINT orders_type_check,
      ADD CONSTRAINT orders_type_check CHECK (type IN ('MARKET', 'LIMIT', 'STOP', 'STOP_LIMIT')),
      DROP COLUMN high_water_mark, DROP COLUMN trail_percent, DROP COLUMN trail_price`);
  }
}
