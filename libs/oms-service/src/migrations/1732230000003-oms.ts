import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Oms1732230000003 implements MigrationInterface {
  name = 'Oms1732230000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE instruments (
        symbol text PRIMARY KEY CHECK (symbol ~ '^[A-Z0-9.]{1,12}$'),
        name text NOT NULL,
        currency char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
        tick_size numeric(20, 8) NOT NULL CHECK (tick_size > 0),
        lot_size numeric(20, 8) NOT NULL CHECK (lot_size > 0),
        last_price numeric(20, 8) NOT NULL CHECK (last_price > 0),
        tradable boolean NOT NULL DEFAULT true
      )`);
    await q.query(`
      CREATE TABLE orders (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        account_id uuid NOT NULL,
        client_order_id text NOT NULL,
        symbol text NOT NULL REFERENCES instruments(symbol),
        side text NOT NULL CHECK (side IN ('BUY', 'SELL')),
        type text NOT NULL,
        time_in_force text NOT NULL,
        quantity numeric(20, 8) NOT NULL CHECK (quantity > 0),
        limit_price numeric(20, 8) CHECK (limit_price > 0),
        status text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (account_id, client_order_id)
      )`);
    await q.query('CREATE INDEX orders_account_idx ON orders (account_id, created_at DESC)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE orders');
    await q.query('DROP TABLE instruments');
  }
}
