import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per environment's credentials: whether every DPoP proof of the client must carry the server's
 * current nonce (RFC 9449 §8), set at registration or promotion. Existing credentials: no.
 */
export class DpopNonce1733400000000 implements MigrationInterface {
  name = 'DpopNonce1733400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE vendor_app_credentials ADD COLUMN dpop_nonce_required boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE vendor_app_credentials DROP COLUMN dpop_nonce_required`);
  }
}
