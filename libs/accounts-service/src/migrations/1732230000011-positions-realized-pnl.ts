import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Realised P&L per holding (booked by fills); existing holdings start at zero. */
export class PositionsRealizedPnl1732230000011 implements MigrationInterface {
  name = 'PositionsRealizedPnl1732230000011';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE positions ADD COLUMN realized_pnl numeric(20, 8) NOT NULL DEFAULT 0');
    await q.query("ALTER TABLE positions ADD CONSTRAINT positions_symbol_check CHECK (symbol ~ '^[A-Z0-9.]{1,12}$')");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE positions DROP CONSTRAINT positions_symbol_check');
    await q.query('ALTER TABLE positions DROP COLUMN realized_pnl');
  }
}
