import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A hold books two postings, a settlement three or four, and each posting ran two PL/pgSQL
 * triggers: one adding it to its running total, and at commit one checking its entry balances
 * (the same entry once per posting). One statement-level trigger now does both for everything a
 * statement posts, with the statement's rows as a transition table: the totals grow by each
 * (account, currency, book)'s sum, taken in one order (PostgreSQL locks those rows as it goes), and
 * every entry the statement touched must sum to zero per currency over all its postings, or the
 * statement fails. The check runs when the statement ends rather than at commit: every code path
 * books an entry's legs in one statement (`postEntry`, the hold), and one that split them would
 * fail at once instead of at commit. Swapped in one transaction (DROP and CREATE TRIGGER lock the
 * table): no posting is written between the two.
 */
export class PostingsPerStatement1732230000050 implements MigrationInterface {
  name = 'PostingsPerStatement1732230000050';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION book_postings() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        unbalanced uuid;
      BEGIN
        SELECT p.entry_id INTO unbalanced FROM postings p
         WHERE p.entry_id IN (SELECT DISTINCT entry_id FROM posted)
         GROUP BY p.entry_id, p.currency HAVING sum(p.amount) <> 0 LIMIT 1;
        IF FOUND THEN
          RAISE EXCEPTION 'journal entry % does not balance', unbalanced USING ERRCODE = 'check_violation';
        END IF;
        INSERT INTO book_balances AS b (account_id, book, currency, amount)
        SELECT account_id, book, currency, sum(amount) FROM posted GROUP BY account_id, currency, book ORDER BY account_id, currency, book
        ON CONFLICT (account_id, currency, book) DO UPDATE SET amount = b.amount + EXCLUDED.amount;
        RETURN NULL;
      END $$`);
    await q.query('DROP TRIGGER postings_add_to_balance ON postings');
    await q.query('DROP TRIGGER postings_balanced ON postings');
    await q.query(
      'CREATE TRIGGER postings_booked AFTER INSERT ON postings REFERENCING NEW TABLE AS posted FOR EACH STATEMENT EXECUTE FUNCTION book_postings()',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER postings_booked ON postings');
    await q.query('DROP FUNCTION book_postings');
    await q.query('CREATE TRIGGER postings_add_to_balance AFTER INSERT ON postings FOR EACH ROW EXECUTE FUNCTION add_posting_to_balance()');
    await q.query(`
      CREATE CONSTRAINT TRIGGER postings_balanced AFTER INSERT OR UPDATE ON postings
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION assert_entry_balanced()`);
  }
}
