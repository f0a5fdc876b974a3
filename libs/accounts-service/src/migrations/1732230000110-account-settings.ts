import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Settings the owner changes through the API: a nickname of their own for the account (none at
 * first) and whether each fill is confirmed by email (on at first, as brokers confirm trades
 * unless told otherwise). The table's change trigger already announces these updates.
 */
export class AccountSettings1732230000110 implements MigrationInterface {
  name = 'AccountSettings1732230000110';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE accounts ADD COLUMN nickname text CHECK (char_length(nickname) BETWEEN 1 AND 64)');
    await q.query('ALTER TABLE accounts ADD COLUMN trade_confirmation_emails boolean NOT NULL DEFAULT true');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE accounts DROP COLUMN trade_confirmation_emails');
    await q.query('ALTER TABLE accounts DROP COLUMN nickname');
  }
}
