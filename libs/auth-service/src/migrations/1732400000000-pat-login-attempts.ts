import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Every PAT login attempt, for the owner's login activity and for support. */
export class PatLoginAttempts1732400000000 implements MigrationInterface {
  name = 'PatLoginAttempts1732400000000';

  async up(q: QueryRunner): Promise<void> {
    // token_id has no foreign key: attempts with ids that never existed are recorded too.
    // reason stays server-side; callers only ever see one uniform 401.
    await q.query(`
      CREATE TABLE pat_login_attempts (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at timestamptz NOT NULL,
        token_id text,
        user_id uuid REFERENCES users(id) ON DELETE CASCADE,
        ip text,
        user_agent text CHECK (length(user_agent) <= 512),
        outcome text NOT NULL CHECK (outcome IN ('SUCCESS', 'FAILURE')),
        reason text CHECK (reason IN ('MALFORMED', 'UNKNOWN_TOKEN', 'WRONG_SECRET', 'REVOKED', 'EXPIRED', 'IP_NOT_ALLOWED', 'RATE_LIMITED')),
        CHECK ((outcome = 'SUCCESS') = (reason IS NULL))
      )`);
    await q.query(`CREATE INDEX pat_login_attempts_user_idx ON pat_login_attempts (user_id, at DESC, id DESC) WHERE user_id IS NOT NULL`);
    await q.query(`CREATE INDEX pat_login_attempts_token_idx ON pat_login_attempts (token_id, at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE pat_login_attempts');
  }
}
