import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The channel OMS instances listen on to keep the instruments they remember current. */
export const INSTRUMENTS_CHANGED_CHANNEL = 'instruments_changed';

/**
 * Every order, what-if and quote reads its instrument; each OMS instance keeps the instruments it
 * has read in memory. Any change to one (a price step, a halt or resume, a listing) is announced
 * at commit on `instruments_changed` with its symbol (`*` after a TRUNCATE), and every instance
 * drops it.
 */
export class InstrumentsChanged1732230000080 implements MigrationInterface {
  name = 'InstrumentsChanged1732230000080';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION instruments_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'TRUNCATE' THEN
          PERFORM pg_notify('${INSTRUMENTS_CHANGED_CHANNEL}', '*');
          RETURN NULL;
        END IF;
        IF TG_OP IN ('UPDATE', 'DELETE') THEN PERFORM pg_notify('${INSTRUMENTS_CHANGED_CHANNEL}', OLD.symbol); END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN PERFORM pg_notify('${INSTRUMENTS_CHANGED_CHANNEL}', NEW.symbol); END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER instruments_written AFTER INSERT OR UPDATE OR DELETE ON instruments
      FOR EACH ROW EXECUTE FUNCTION instruments_changed()`);
    await q.query(`
      CREATE TRIGGER instruments_truncated AFTER TRUNCATE ON instruments
      FOR EACH STATEMENT EXECUTE FUNCTION instruments_changed()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER instruments_truncated ON instruments');
    await q.query('DROP TRIGGER instruments_written ON instruments');
    await q.query('DROP FUNCTION instruments_changed()');
  }
}
