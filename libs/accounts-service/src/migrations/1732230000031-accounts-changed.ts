import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every instance keeps its users' accounts in memory (read on every call that lists or checks
 * one): a change to the table, by the service or by hand, is announced at commit on
 * `accounts_changed` with the owner's id (`*` after a TRUNCATE), and each instance drops it.
 */
export class AccountsChanged1732230000031 implements MigrationInterface {
  name = 'AccountsChanged1732230000031';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION accounts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'TRUNCATE' THEN
          PERFORM pg_notify('accounts_changed', '*');
          RETURN NULL;
        END IF;
        IF TG_OP <> 'INSERT' THEN PERFORM pg_notify('accounts_changed', OLD.user_id::text); END IF;
        IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW.user_id IS DISTINCT FROM OLD.user_id) THEN
          PERFORM pg_notify('accounts_changed', NEW.user_id::text);
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER accounts_changed AFTER INSERT OR UPDATE OR DELETE ON accounts
      FOR EACH ROW EXECUTE FUNCTION accounts_changed()`);
    await q.query(`
      CREATE TRIGGER accounts_truncated AFTER TRUNCATE ON accounts
      FOR EACH STATEMENT EXECUTE FUNCTION accounts_changed()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER accounts_truncated ON accounts');
    await q.query('DROP TRIGGER accounts_changed ON accounts');
    await q.query('DROP FUNCTION accounts_changed()');
  }
}
