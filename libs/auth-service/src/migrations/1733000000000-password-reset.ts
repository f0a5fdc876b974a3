import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Password reset by e-mail. A link's token is stored only as its SHA-256 (a read
 * of this table yields no usable link), lives 30 minutes and is spent by the first use.
 * A reset mail's link may be shown in the development mail log (`reveal_in_log`): it is short
 * lived and single use, unlike a vendor's client secret, which stays SMTP-only.
 */
export class PasswordReset1733000000000 implements MigrationInterface {
  name = 'PasswordReset1733000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE password_reset_tokens (
        token_hash text PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        CHECK (expires_at > created_at)
      )`);
    await q.query('CREATE INDEX password_reset_tokens_user_idx ON password_reset_tokens (user_id) WHERE used_at IS NULL');
    await q.query('ALTER TABLE email_outbox ADD COLUMN reveal_in_log boolean NOT NULL DEFAULT false');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE email_outbox DROP COLUMN reveal_in_log');
    await q.query('DROP TABLE password_reset_tokens');
  }
}
