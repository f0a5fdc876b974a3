import type { MigrationInterface, QueryRunner } from 'typeorm';

/** OAuth 2.0: the vendor app registry (per-environment credentials), OAuth grants and the e-mail outbox. */
export class OAuth1732500000000 implements MigrationInterface {
  name = 'OAuth1732500000000';

  async up(q: QueryRunner): Promise<void> {
    const environment = `text NOT NULL CHECK (environment IN ('DEV', 'UAT', 'PROD'))`;
    await q.query(`
      CREATE TABLE vendor_apps (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        company_name text NOT NULL,
        company_website text NOT NULL,
        business_email text NOT NULL,
        country text NOT NULL CHECK (country ~ '^[A-Z]{2}$'),
        phone text,
        app_name text NOT NULL,
        description text,
        logo_url text NOT NULL,
        homepage_url text NOT NULL,
        support_email text NOT NULL,
        support_url text,
        privacy_policy_url text NOT NULL,
        terms_of_service_url text NOT NULL,
        requested_scopes text[] NOT NULL,
        approved_scopes text[] NOT NULL CHECK (cardinality(approved_scopes) > 0 AND approved_scopes <@ requested_scopes),
        status text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'SUSPENDED')),
        -- the furthest environment it was promoted to (DEV → UAT → PROD)
        environment ${environment},
        created_at timestamptz NOT NULL DEFAULT now(),
        suspended_at timestamptz,
        CHECK ((status = 'SUSPENDED') = (suspended_at IS NOT NULL))
      )`);
    await q.query(`
      CREATE TABLE vendor_app_credentials (
        client_id text PRIMARY KEY,
        app_id uuid NOT NULL REFERENCES vendor_apps(id) ON DELETE CASCADE,
        environment ${environment},
        secret_hash text NOT NULL,
        redirect_uris text[] NOT NULL CHECK (cardinality(redirect_uris) > 0),
        created_at timestamptz NOT NULL DEFAULT now(),
        secret_rotated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (app_id, environment)
      )`);
    await q.query(`
      CREATE TABLE oauth_grants (
        id uuid PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        app_id uuid NOT NULL REFERENCES vendor_apps(id) ON DELETE CASCADE,
        client_id text NOT NULL,
        scope text[] NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at timestamptz,
        revoked_reason text CHECK (revoked_reason IN ('USER', 'CLIENT', 'CODE_REUSED', 'REFRESH_TOKEN_REUSED', 'APP_SUSPENDED')),
        CHECK ((revoked_at IS NULL) = (revoked_reason IS NULL))
      )`);
    await q.query(`CREATE INDEX oauth_grants_user_idx ON oauth_grants (user_id, created_at DESC) WHERE revoked_at IS NULL`);
    await q.query(`CREATE INDEX oauth_grants_app_idx ON oauth_grants (app_id) WHERE revoked_at IS NULL`);
    // The plain secret waits in \`secret\` only until the mail is delivered, then it is erased.
    await q.query(`
      CREATE TABLE email_outbox (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        to_address text NOT NULL,
        subject text NOT NULL,
        body text NOT NULL,
        secret text,
        created_at timestamptz NOT NULL DEFAULT now(),
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        attempts integer NOT NULL DEFAULT 0,
        last_error text,
        sent_at timestamptz,
        CHECK (sent_at IS NULL OR secret IS NULL)
      )`);
    await q.query(`CREATE INDEX email_outbox_pending_idx ON email_outbox (next_attempt_at) WHERE sent_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE email_outbox');
    await q.query('DROP TABLE oauth_grants');
    await q.query('DROP TABLE vendor_app_credentials');
    await q.query('DROP TABLE vendor_apps');
  }
}
