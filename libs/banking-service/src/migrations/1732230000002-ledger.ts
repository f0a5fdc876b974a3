import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Ledger1732230000002 implements MigrationInterface {
  name = 'Ledger1732230000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE journal_entries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        kind text NOT NULL,
        description text NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE postings (
        id bigserial PRIMARY KEY,
        entry_id uuid NOT NULL REFERENCES journal_entries(id),
        account_id uuid NOT NULL,
        book text NOT NULL CHECK (book IN ('CUSTOMER_CASH', 'BANK_CLEARING')),
        currency char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
        amount numeric(20, 8) NOT NULL CHECK (amount <> 0)
      )`);
    await q.query('CREATE INDEX postings_account_idx ON postings (account_id, book, currency)');
    await q.query('CREATE INDEX postings_entry_idx ON postings (entry_id)');
    // Double entry, enforced by the database: at commit, every entry touched sums to zero per currency.
    await q.query(`
      CREATE FUNCTION assert_entry_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (
          SELECT 1 FROM postings WHERE entry_id = NEW.entry_id
          GROUP BY currency HAVING sum(amount) <> 0
        ) THEN
          RAISE EXCEPTION 'journal entry % does not balance', NEW.entry_id USING ERRCODE = 'check_violation';
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE CONSTRAINT TRIGGER postings_balanced AFTER INSERT OR UPDATE ON postings
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION assert_entry_balanced()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE postings');
    await q.query('DROP FUNCTION assert_entry_balanced');
    await q.query('DROP TABLE journal_entries');
  }
}
