import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Passkeys (WebAuthn credentials), several per user: the credential's id and public key as the
 * authenticator gave them at registration, its signature counter, its transports (hints for the
 * browser), the user handle it holds for this site, the name the user gave it, and when it was
 * added and last used. No secret is stored: the private key never leaves the authenticator.
 */
export class Passkeys1733700000000 implements MigrationInterface {
  name = 'Passkeys1733700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE passkeys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        credential_id text NOT NULL UNIQUE,
        public_key bytea NOT NULL,
        counter bigint NOT NULL DEFAULT 0,
        transports text[] NOT NULL DEFAULT '{}',
        user_handle text NOT NULL,
        name text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz
      )`);
    await q.query(`CREATE INDEX passkeys_user ON passkeys (user_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE passkeys`);
  }
}
