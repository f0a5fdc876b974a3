import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * CORS: each environment's credentials list the web origins (scheme://host[:port]) whose
 * pages may call the API from a browser; the facade answers CORS for those of active apps only.
 * Existing credentials get none: server-to-server, as before.
 */
export class WebOrigins1732700000000 implements MigrationInterface {
  name = 'WebOrigins1732700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE vendor_app_credentials ADD COLUMN web_origins text[] NOT NULL DEFAULT '{}' CHECK (cardinality(web_origins) <= 20)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE vendor_app_credentials DROP COLUMN web_origins');
  }
}
