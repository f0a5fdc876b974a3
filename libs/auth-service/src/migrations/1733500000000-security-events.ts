import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A user's security log: sign-ins, PATs created and revoked, apps connected and disconnected,
 * password resets. Shown to the user on the dashboard for 90 days, then purged. `detail` holds a
 * few small facts (a token's name and id, a scope), never a secret.
 */
export class SecurityEvents1733500000000 implements MigrationInterface {
  name = 'SecurityEvents1733500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE security_events (
        id bigserial PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        type text NOT NULL,
        occurred_at timestamptz NOT NULL DEFAULT now(),
        client_address text CHECK (length(client_address) <= 64),
        user_agent text CHECK (length(user_agent) <= 512),
        app_client_id text CHECK (length(app_client_id) <= 200),
        app_name text CHECK (length(app_name) <= 200),
        detail jsonb NOT NULL DEFAULT '{}' CHECK (length(detail::text) <= 2000)
      )`);
    await q.query('CREATE INDEX security_events_user_idx ON security_events (user_id, occurred_at DESC)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE security_events');
  }
}
