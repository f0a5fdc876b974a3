import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An order replaced by another. The replacement names the order it replaces; the
 * replaced order names its replacement from the moment the replace begins (the engine and
 * cancels leave it alone from then on) and ends CANCELLED with the reason.
 */
export class OrderReplace1732230000050 implements MigrationInterface {
  name = 'OrderReplace1732230000050';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE orders ADD COLUMN replaces_order_id uuid REFERENCES orders(id), ADD COLUMN replaced_by_order_id uuid');
    await q.query("CREATE INDEX orders_replacing_idx ON orders (created_at) WHERE replaces_order_id IS NOT NULL AND status = 'ACCEPTED'");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX orders_replacing_idx');
    await q.query('ALTER TABLE orders DROP COLUMN replaced_by_order_id, DROP COLUMN replaces_order_id');
  }
}
