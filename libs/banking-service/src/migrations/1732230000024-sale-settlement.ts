import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A sale's proceeds wait in CUSTOMER_UNSETTLED until its settlement date (T+n
 * business days); one row per sale says what moves to CUSTOMER_CASH, and when.
 */
export class SaleSettlement1732230000024 implements MigrationInterface {
  name = 'SaleSettlement1732230000024';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE sale_settlements (
        trade_id uuid PRIMARY KEY,
        account_id uuid NOT NULL,
        currency char(3) NOT NULL,
        amount numeric(20, 8) NOT NULL CHECK (amount >= 0),
        settle_on date NOT NULL,
        settled_at timestamptz
      )`);
    await q.query('CREATE INDEX sale_settlements_due_idx ON sale_settlements (settle_on) WHERE settled_at IS NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE sale_settlements');
  }
}
