import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Access limited to chosen accounts: a grant (one user's consent to one app) and a personal
 * access token may name the accounts they reach. NULL keeps the old meaning, every account of
 * the user's, including those opened later; a list reaches those accounts only.
 */
export class ChosenAccounts1733650000000 implements MigrationInterface {
  name = 'ChosenAccounts1733650000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE oauth_grants ADD COLUMN account_ids uuid[]`);
    await q.query(`ALTER TABLE personal_access_tokens ADD COLUMN account_ids uuid[]`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE personal_access_tokens DROP COLUMN account_ids`);
    await q.query(`ALTER TABLE oauth_grants DROP COLUMN account_ids`);
  }
}
