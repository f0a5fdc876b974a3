import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Trade settlement from the OMS's event stream. Each event is applied once (its id is
 * recorded in the same transaction as its journal entries); a hold records how much of it
 * fills have settled; each trade's entries carry the trade id.
 */
export class Settlement1732230000022 implements MigrationInterface {
  name = 'Settlement1732230000022';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE settlement_events (
        event_id uuid PRIMARY KEY,
        type text NOT NULL,
        processed_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      'ALTER TABLE holds ADD COLUMN settled_amount numeric(20, 8) NOT NULL DEFAULT 0 CHECK (settled_amount >= 0 AND settled_amount <= amount)',
    );
    await q.query('ALTER TABLE journal_entries ADD COLUMN trade_id uuid');
    await q.query('CREATE INDEX journal_entries_trade_idx ON journal_entries (trade_id) WHERE trade_id IS NOT NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE journal_entries DROP COLUMN trade_id');
    await q.query('ALTER TABLE holds DROP COLUMN settled_amount');
    await q.query('DROP TABLE settlement_events');
  }
}
