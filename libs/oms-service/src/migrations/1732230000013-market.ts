import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The market's previous close per instrument (for day change) and FX rates for valuation. */
export class Market1732230000013 implements MigrationInterface {
  name = 'Market1732230000013';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE instruments ADD COLUMN previous_close numeric(20, 8)');
    await q.query('UPDATE instruments SET previous_close = last_price');
    await q.query('ALTER TABLE instruments ALTER COLUMN previous_close SET NOT NULL');
    await q.query('ALTER TABLE instruments ADD CONSTRAINT instruments_previous_close_check CHECK (previous_close > 0)');
    await q.query(`
      CREATE TABLE fx_rates (
        currency char(3) PRIMARY KEY CHECK (currency ~ '^[A-Z]{3}$'),
        usd_rate numeric(24, 12) NOT NULL CHECK (usd_rate > 0),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK (currency <> 'USD' OR usd_rate = 1)
      )`);
    // USD is the anchor of every cross rate.
    await q.query("INSERT INTO fx_rates (currency, usd_rate) VALUES ('USD', 1)");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE fx_rates');
    await q.query('ALTER TABLE instruments DROP COLUMN previous_close');
  }
}
