import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The channel auth instances listen on to keep the grants they remember current. */
export const GRANTS_CHANGED_CHANNEL = 'oauth_grants_changed';

/**
 * Every refresh reads its grant; each auth instance keeps the grants it has read in memory. A
 * change that matters to a refresh (revoked, activated, its scope, user, app or client), a new
 * grant and a deleted one are announced at commit on `oauth_grants_changed` with the grant's id
 * (`*` after a TRUNCATE), and every instance drops it. The minute-by-minute "last used" write is
 * not announced. A revocation stays exact without it: each refresh checks the grant is live in
 * PostgreSQL after its new session exists (touchIfActive).
 */
export class GrantsChanged1733100000000 implements MigrationInterface {
  name = 'GrantsChanged1733100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION oauth_grants_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'TRUNCATE' THEN
          PERFORM pg_notify('${GRANTS_CHANGED_CHANNEL}', '*');
        ELSIF TG_OP = 'DELETE' THEN
          PERFORM pg_notify('${GRANTS_CHANGED_CHANNEL}', OLD.id::text);
        ELSE
          PERFORM pg_notify('${GRANTS_CHANGED_CHANNEL}', NEW.id::text);
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER oauth_grants_written AFTER INSERT OR DELETE ON oauth_grants
      FOR EACH ROW EXECUTE FUNCTION oauth_grants_changed()`);
    await q.query(`
      CREATE TRIGGER oauth_grants_updated AFTER UPDATE ON oauth_grants FOR EACH ROW
      WHEN ((OLD.revoked_at, OLD.activated_at, OLD.scope, OLD.user_id, OLD.app_id, OLD.client_id)
            IS DISTINCT FROM (NEW.revoked_at, NEW.activated_at, NEW.scope, NEW.user_id, NEW.app_id, NEW.client_id))
      EXECUTE FUNCTION oauth_grants_changed()`);
    await q.query(`
      CREATE TRIGGER oauth_grants_truncated AFTER TRUNCATE ON oauth_grants
      FOR EACH STATEMENT EXECUTE FUNCTION oauth_grants_changed()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER oauth_grants_truncated ON oauth_grants');
    await q.query('DROP TRIGGER oauth_grants_updated ON oauth_grants');
    await q.query('DROP TRIGGER oauth_grants_written ON oauth_grants');
    await q.query('DROP FUNCTION oauth_grants_changed()');
  }
}
