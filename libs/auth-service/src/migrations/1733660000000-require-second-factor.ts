import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An app's own policy, per environment: consenting to it needs a second factor in the session
 * (a user without one cannot connect it). Off for existing credentials.
 */
export class RequireSecondFactor1733660000000 implements MigrationInterface {
  name = 'RequireSecondFactor1733660000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE vendor_app_credentials ADD COLUMN require_second_factor boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE vendor_app_credentials DROP COLUMN require_second_factor`);
  }
}
