import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Balances show the account's pending deposits and withdrawals (`pendingIn`, `pendingOut`): read
 * from the few PENDING rows of the account through this partial index, not its whole funding history.
 */
export class PendingFundingIndex1732230000045 implements MigrationInterface {
  name = 'PendingFundingIndex1732230000045';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX funding_transactions_account_pending_idx ON funding_transactions (account_id, currency) WHERE state = 'PENDING'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX funding_transactions_account_pending_idx');
  }
}
