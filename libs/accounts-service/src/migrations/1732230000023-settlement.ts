import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Positions change only through the OMS's settlement events, each applied once (its
 * id recorded in the same transaction). Per holding, the net quantity those trades added, so
 * the OMS can add the trades it knows of that are not applied yet when it checks a sell.
 */
export class Settlement1732230000023 implements MigrationInterface {
  name = 'Settlement1732230000023';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE settlement_events (
        event_id uuid PRIMARY KEY,
        type text NOT NULL,
        processed_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE position_trade_totals (
        account_id uuid NOT NULL,
        symbol text NOT NULL,
        traded_quantity numeric(20, 8) NOT NULL DEFAULT 0,
        trade_count int NOT NULL DEFAULT 0,
        PRIMARY KEY (account_id, symbol)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE position_trade_totals');
    await q.query('DROP TABLE settlement_events');
  }
}
