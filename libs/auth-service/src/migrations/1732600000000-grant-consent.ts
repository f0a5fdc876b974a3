import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A grant is written when the user consents, before any code exists: redeeming a code then
 * finds its user, app and scope in PostgreSQL rather than believing the code's record in Redis.
 * `activated_at` is set by the one redemption that counts; until then the grant lists nowhere.
 */
export class GrantConsent1732600000000 implements MigrationInterface {
  name = 'GrantConsent1732600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE oauth_grants ADD COLUMN activated_at timestamptz');
    await q.query('UPDATE oauth_grants SET activated_at = created_at');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DELETE FROM oauth_grants WHERE activated_at IS NULL');
    await q.query('ALTER TABLE oauth_grants DROP COLUMN activated_at');
  }
}
