import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Second factors at sign-in: a user's authenticator app (a TOTP secret, stored encrypted; the
 * last time step a code was accepted for, so each code counts once) and its one-time recovery
 * codes (their SHA-256 hashes only). A factor is unconfirmed until its first code is entered:
 * only a confirmed one is asked for at sign-in, and a user has at most one.
 */
export class SecondFactors1733600000000 implements MigrationInterface {
  name = 'SecondFactors1733600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE second_factors (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('totp')),
        name text NOT NULL,
        secret_encrypted text NOT NULL,
        last_time_step bigint,
        confirmed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX second_factors_user ON second_factors (user_id)`);
    await q.query(`CREATE UNIQUE INDEX second_factors_one_confirmed ON second_factors (user_id) WHERE confirmed_at IS NOT NULL`);
    await q.query(`
      CREATE TABLE recovery_codes (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        code_hash text NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX recovery_codes_user ON recovery_codes (user_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE recovery_codes`);
    await q.query(`DROP TABLE second_factors`);
  }
}
