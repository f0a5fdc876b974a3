import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * FAPI 2.0: per environment's credentials, how the client authenticates at the token and PAR
 * endpoints (a client secret, or private_key_jwt with a registered JWK Set, inline or by URL)
 * and its policy: pushed authorization requests required, DPoP-bound access tokens required.
 * Existing credentials keep what they did (secret, no PAR, no DPoP); new PROD credentials get
 * both policies by default (the registry decides that). Each app gets a random secret of its
 * own for OpenID Connect's pairwise subject identifiers (HMAC of the user id): stable across
 * environments and key rotations, different for every app.
 */
export class ClientPolicy1732800000000 implements MigrationInterface {
  name = 'ClientPolicy1732800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE vendor_app_credentials
        ADD COLUMN token_endpoint_auth_method text NOT NULL DEFAULT 'client_secret_basic'
          CHECK (token_endpoint_auth_method IN ('client_secret_basic', 'client_secret_post', 'private_key_jwt')),
        ADD COLUMN jwks jsonb,
        ADD COLUMN jwks_uri text CHECK (jwks_uri IS NULL OR jwks_uri LIKE 'https://%'),
        ADD COLUMN require_pushed_authorization_requests boolean NOT NULL DEFAULT false,
        ADD COLUMN dpop_bound_access_tokens boolean NOT NULL DEFAULT false,
        ADD CHECK (jwks IS NULL OR jwks_uri IS NULL),
        ADD CHECK (token_endpoint_auth_method <> 'private_key_jwt' OR jwks IS NOT NULL OR jwks_uri IS NOT NULL)`);
    // gen_random_uuid() is volatile: every existing row gets its own value.
    await q.query(`
      ALTER TABLE vendor_apps
        ADD COLUMN subject_secret text NOT NULL
          DEFAULT encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE vendor_apps DROP COLUMN subject_secret');
    await q.query(`ALTER TABLE vendor_app_credentials DROP COLUMN token_endpoint_auth_method, DROP COLUMN jwks, DROP COLUMN jwks_uri,
      DROP COLUMN require_pushed_authorization_requests, DROP COLUMN dpop_bound_access_tokens`);
  }
}
