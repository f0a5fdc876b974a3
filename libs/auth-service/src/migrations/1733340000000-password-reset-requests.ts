import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reset requests waiting to become a link and its mail. Asking for a link only writes a row
 * here, the same row whether or not the address is an account's; the mail dispatcher looks the
 * address up, makes the token and queues the mail afterwards, so the answer never waits on (or
 * reveals) the account. Rows are deleted as they are handled.
 */
export class PasswordResetRequests1733340000000 implements MigrationInterface {
  name = 'PasswordResetRequests1733340000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE password_reset_requests (
        id bigserial PRIMARY KEY,
        email text NOT NULL,
        locale text NOT NULL,
        requested_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE password_reset_requests');
  }
}
