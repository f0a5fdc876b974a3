import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The channel auth instances listen on to keep the clients they remember current. */
export const CLIENTS_CHANGED_CHANNEL = 'oauth_clients_changed';

/**
 * Every token request authenticates its client (the app joined to its credentials); each auth
 * instance keeps the clients it has read in memory. Any change to a client's credentials (a new
 * secret, redirect URIs, its policy, a new or deleted client) or to its app (suspended, scopes,
 * names) is announced at commit on `oauth_clients_changed` with each client id concerned (`*`
 * after a TRUNCATE), and every instance drops it.
 */
export class ClientsChanged1733200000000 implements MigrationInterface {
  name = 'ClientsChanged1733200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION oauth_credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'TRUNCATE' THEN
          PERFORM pg_notify('${CLIENTS_CHANGED_CHANNEL}', '*');
          RETURN NULL;
        END IF;
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
          PERFORM pg_notify('${CLIENTS_CHANGED_CHANNEL}', OLD.client_id);
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
          PERFORM pg_notify('${CLIENTS_CHANGED_CHANNEL}', NEW.client_id);
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER oauth_credentials_written AFTER INSERT OR UPDATE OR DELETE ON vendor_app_credentials
      FOR EACH ROW EXECUTE FUNCTION oauth_credentials_changed()`);
    await q.query(`
      CREATE TRIGGER oauth_credentials_truncated AFTER TRUNCATE ON vendor_app_credentials
      FOR EACH STATEMENT EXECUTE FUNCTION oauth_credentials_changed()`);
    // An app's row is part of each of its clients: announce them all.
    await q.query(`
      CREATE FUNCTION oauth_app_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'TRUNCATE' THEN
          PERFORM pg_notify('${CLIENTS_CHANGED_CHANNEL}', '*');
        ELSE
          PERFORM pg_notify('${CLIENTS_CHANGED_CHANNEL}', c.client_id) FROM vendor_app_credentials c WHERE c.app_id = OLD.id;
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER oauth_app_written AFTER UPDATE OR DELETE ON vendor_apps
      FOR EACH ROW EXECUTE FUNCTION oauth_app_changed()`);
    await q.query(`
      CREATE TRIGGER oauth_app_truncated AFTER TRUNCATE ON vendor_apps
      FOR EACH STATEMENT EXECUTE FUNCTION oauth_app_changed()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER oauth_app_truncated ON vendor_apps');
    await q.query('DROP TRIGGER oauth_app_written ON vendor_apps');
    await q.query('DROP FUNCTION oauth_app_changed()');
    await q.query('DROP TRIGGER oauth_credentials_truncated ON vendor_app_credentials');
    await q.query('DROP TRIGGER oauth_credentials_written ON vendor_app_credentials');
    await q.query('DROP FUNCTION oauth_credentials_changed()');
  }
}
