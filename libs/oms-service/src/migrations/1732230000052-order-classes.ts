import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Order classes. A BRACKET or OTO entry's children name it (`parent_order_id`) and
 * wait PENDING until it fills; the legs that cancel each other (a bracket's take-profit and
 * stop-loss, an OCO's two legs) share `oco_group_id`; `leg` says which exit a child is.
 */
export class OrderClasses1732230000052 implements MigrationInterface {
  name = 'OrderClasses1732230000052';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE orders
      ADD COLUMN order_class text NOT NULL DEFAULT 'SIMPLE' CHECK (order_class IN ('SIMPLE', 'BRACKET', 'OCO', 'OTO')),
      ADD COLUMN parent_order_id uuid REFERENCES orders(id),
      ADD COLUMN leg text CHECK (leg IN ('TAKE_PROFIT', 'STOP_LOSS')),
      ADD COLUMN oco_group_id uuid,
      DROP CONSTRAINT orders_status_check,
      ADD CONSTRAINT orders_status_check CHECK (status IN ('ACCEPTED', 'PENDING', 'NEW', 'PARTIALLY_FILLED', 'FILLED', 'CANCELLED', 'REJECTED', 'EXPIRED'))`);
    await q.query('CREATE INDEX orders_parent_idx ON orders (parent_order_id) WHERE parent_order_id IS NOT NULL');
    await q.query('CREATE INDEX orders_oco_group_idx ON orders (oco_group_id) WHERE oco_group_id IS NOT NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX orders_oco_group_idx');
    await q.query('DROP INDEX orders_parent_idx');
    await q.query(`ALTER TABLE orders DROP CONSTRAINT orders_status_check,
      ADD CONSTRAINT orders_status_check CHECK (status IN ('ACCEPTED', 'NEW', 'PARTIALLY_FILLED', 'FILLED', 'CANCELLED', 'REJECTED', 'EXPIRED')),
      DROP COLUMN oco_group_id, DROP COLUMN leg, DROP COLUMN parent_order_id, DROP COLUMN order_class`);
  }
}
