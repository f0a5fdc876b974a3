import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Initial1732230000000 implements MigrationInterface {
  name = 'Initial1732230000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE users (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        email text NOT NULL UNIQUE CHECK (email = lower(email)),
        password_hash text NOT NULL,
        first_name text NOT NULL,
        last_name text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE personal_access_tokens (
        id text PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
        secret_hash text NOT NULL,
        access text NOT NULL CHECK (access IN ('READ_ONLY', 'READ_WRITE')),
        ip_allowlist text[] NOT NULL DEFAULT '{}',
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz,
        last_used_at timestamptz,
        last_used_ip text
      )`);
    await q.query(`CREATE INDEX personal_access_tokens_user_idx ON personal_access_tokens (user_id, created_at DESC)`);
    await q.query(`
      CREATE TABLE signing_keys (
        kid text PRIMARY KEY,
        private_key_pem text NOT NULL,
        public_jwk jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        retired_at timestamptz
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE signing_keys');
    await q.query('DROP TABLE personal_access_tokens');
    await q.query('DROP TABLE users');
  }
}
