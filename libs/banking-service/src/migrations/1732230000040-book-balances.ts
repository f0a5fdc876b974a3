import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each account's running total per book and currency, kept by the database from the postings
 * themselves: a trigger adds every posting to its total in the same transaction, so no code path
 * can book without it, and the ledger stays the record (the totals always equal its sums, which
 * the invariant checks assert). Before this, a hold or withdrawal summed the account's whole
 * posting history under the account's lock: an active account got slower to trade with every
 * order it had ever placed.
 */
export class BookBalances1732230000040 implements MigrationInterface {
  name = 'BookBalances1732230000040';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE book_balances (
        account_id uuid NOT NULL,
        book text NOT NULL,
        currency char(3) NOT NULL,
        amount numeric(28, 8) NOT NULL,
        PRIMARY KEY (account_id, currency, book)
      )`);
    await q.query(`
      CREATE FUNCTION add_posting_to_balance() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO book_balances (account_id, book, currency, amount)
        VALUES (NEW.account_id, NEW.book, NEW.currency, NEW.amount)
        ON CONFLICT (account_id, currency, book) DO UPDATE SET amount = book_balances.amount + EXCLUDED.amount;
        RETURN NULL;
      END $$`);
    // Postings are append-only (nothing updates or deletes them); refuse anything else so the totals cannot drift.
    await q.query(`
      CREATE FUNCTION refuse_posting_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'postings are append-only' USING ERRCODE = 'restrict_violation';
      END $$`);
    // Taken under the same lock as the insert: the table is small, the window short.
    await q.query('LOCK TABLE postings IN SHARE ROW EXCLUSIVE MODE');
    await q.query(`CREATE TRIGGER postings_add_to_balance AFTER INSERT ON postings FOR EACH ROW EXECUTE FUNCTION add_posting_to_balance()`);
    await q.query(
      `CREATE TRIGGER postings_append_only BEFORE UPDATE OR DELETE ON postings FOR EACH ROW EXECUTE FUNCTION refuse_posting_change()`,
    );
    await q.query(`
      INSERT INTO book_balances (account_id, book, currency, amount)
      SELECT account_id, book, currency, sum(amount) FROM postings GROUP BY account_id, book, currency`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER postings_append_only ON postings');
    await q.query('DROP TRIGGER postings_add_to_balance ON postings');
    await q.query('DROP FUNCTION refuse_posting_change');
    await q.query('DROP FUNCTION add_posting_to_balance');
    await q.query('DROP TABLE book_balances');
  }
}
