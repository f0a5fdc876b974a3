import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Vendors' webhooks.
 * - `webhook_endpoints`: an app's URLs per environment, the events each wants, its signing
 *   secrets (encrypted: auth must sign with them, so they cannot be hashed; the previous one
 *   keeps signing beside the new one until `previous_secret_until`), and since when it fails.
 * - `webhook_events`: what happened, once each (`dedupe_key`: an order's status with its filled
 *   quantity, a transfer's end, a grant's end), with the user it concerns.
 * - `webhook_deliveries`: one per event and endpoint, written in the transaction that records the
 *   event (so none is lost), claimed by a sender with a lease (`leased_until`) and retried on a
 *   schedule until delivered or given up.
 * - `webhook_attempts`: each try's status code, duration and the receiver's first bytes.
 * A grant's revocation records `grant.revoked` for the app's endpoints in the revoking
 * transaction itself (a trigger), whichever path revoked it.
 */
export class Webhooks1733800000000 implements MigrationInterface {
  name = 'Webhooks1733800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_endpoints (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        client_id text NOT NULL REFERENCES vendor_app_credentials(client_id) ON DELETE CASCADE,
        environment text NOT NULL CHECK (environment IN ('DEV', 'UAT', 'PROD')),
        url text NOT NULL,
        event_types text[] NOT NULL CHECK (cardinality(event_types) > 0),
        enabled boolean NOT NULL DEFAULT true,
        description text,
        secret_encrypted text NOT NULL,
        previous_secret_encrypted text,
        previous_secret_until timestamptz,
        failing_since timestamptz,
        disabled_reason text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX webhook_endpoints_client ON webhook_endpoints (client_id)`);
    await q.query(`
      CREATE TABLE webhook_events (
        id uuid PRIMARY KEY,
        seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
        type text NOT NULL,
        user_id uuid NOT NULL,
        account_id uuid,
        dedupe_key text NOT NULL UNIQUE,
        data jsonb NOT NULL,
        occurred_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE webhook_deliveries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
        event_id uuid NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
        endpoint_id uuid NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
        status text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'DELIVERED', 'FAILED', 'DROPPED')),
        attempts int NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        leased_until timestamptz,
        last_status_code int,
        last_error text,
        delivered_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (event_id, endpoint_id)
      )`);
    await q.query(`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint_id, seq) WHERE status = 'PENDING'`);
    await q.query(`CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, seq DESC)`);
    await q.query(`
      CREATE TABLE webhook_attempts (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        delivery_id uuid NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
        attempted_at timestamptz NOT NULL DEFAULT now(),
        status_code int,
        duration_ms int NOT NULL,
        error text,
        response_snippet text
      )`);
    await q.query(`CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id)`);
    await recordRevocations(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER oauth_grants_webhook_revoked ON oauth_grants`);
    await q.query(`DROP FUNCTION webhook_grant_revoked()`);
    await q.query(`DROP TABLE webhook_attempts, webhook_deliveries, webhook_events, webhook_endpoints`);
  }
}

/** `grant.revoked` recorded, with its deliveries, in the transaction that revokes the app's last live grant of the user's. */
async function recordRevocations(q: QueryRunner): Promise<void> {
  await q.query(`
    CREATE FUNCTION webhook_grant_revoked() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      event_id uuid := gen_random_uuid();
    BEGIN
      IF NEW.activated_at IS NULL OR EXISTS (
        SELECT 1 FROM oauth_grants o WHERE o.user_id = NEW.user_id AND o.client_id = NEW.client_id
          AND o.revoked_at IS NULL AND o.activated_at IS NOT NULL) THEN
        RETURN NULL; -- never connected, or the app still holds another live grant of the user's
      END IF;
      INSERT INTO webhook_events (id, type, user_id, dedupe_key, data, occurred_at)
        VALUES (event_id, 'grant.revoked', NEW.user_id,
                'grant.revoked:' || NEW.user_id || ':' || NEW.client_id || ':' || extract(epoch FROM NEW.revoked_at),
                jsonb_build_object('clientId', NEW.client_id, 'revokedAt', to_char(NEW.revoked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
                NEW.revoked_at)
        ON CONFLICT (dedupe_key) DO NOTHING;
      IF FOUND THEN
        INSERT INTO webhook_deliveries (event_id, endpoint_id)
          SELECT event_id, e.id FROM webhook_endpoints e
           WHERE e.client_id = NEW.client_id AND e.enabled AND 'grant.revoked' = ANY (e.event_types);
      END IF;
      RETURN NULL;
    END $$`);
  await q.query(`
    CREATE TRIGGER oauth_grants_webhook_revoked AFTER UPDATE OF revoked_at ON oauth_grants
      FOR EACH ROW WHEN (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL) EXECUTE FUNCTION webhook_grant_revoked()`);
}
