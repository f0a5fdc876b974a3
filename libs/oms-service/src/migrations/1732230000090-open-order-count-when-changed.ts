import type { MigrationInterface, QueryRunner } from 'typeorm';

const OPEN = "IN ('ACCEPTED', 'NEW', 'PARTIALLY_FILLED')";
/** Whether a row counts as one of its account's open orders (as count_open_orders decides). */
const open = (row: 'OLD' | 'NEW') => `(${row}.status ${OPEN} AND ${row}.replaced_by_order_id IS NULL)`;

/**
 * The open-order count's trigger ran its PL/pgSQL function for every update of an order, only to
 * return at once for nearly all of them: an order starting to work (ACCEPTED to NEW), each fill
 * short of the last, every change of a timestamp. The update trigger now has a WHEN condition that
 * PostgreSQL evaluates itself, so the function runs only for an update that changes whether the
 * order is open, or its account (the same test the function begins with). Inserts and deletes
 * always change the count and keep their trigger. Swapped in one transaction, under the lock
 * DROP and CREATE TRIGGER take: no order is written between the two.
 */
export class OpenOrderCountWhenChanged1732230000090 implements MigrationInterface {
  name = 'OpenOrderCountWhenChanged1732230000090';

  async up(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER orders_count_open ON orders');
    await q.query('CREATE TRIGGER orders_count_open AFTER INSERT OR DELETE ON orders FOR EACH ROW EXECUTE FUNCTION count_open_orders()');
    await q.query(`
      CREATE TRIGGER orders_count_open_changed AFTER UPDATE OF status, replaced_by_order_id, account_id ON orders FOR EACH ROW
      WHEN (${open('OLD')} IS DISTINCT FROM ${open('NEW')} OR OLD.account_id IS DISTINCT FROM NEW.account_id)
      EXECUTE FUNCTION count_open_orders()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER orders_count_open_changed ON orders');
    await q.query('DROP TRIGGER orders_count_open ON orders');
    await q.query(
      'CREATE TRIGGER orders_count_open AFTER INSERT OR UPDATE OR DELETE ON orders FOR EACH ROW EXECUTE FUNCTION count_open_orders()',
    );
  }
}
