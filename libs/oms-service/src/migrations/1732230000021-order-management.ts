import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Instrument trading rules, the simulated feed's clock, the order lifecycle with a
 * timestamp per transition, trades (fills), the settlement outbox and idempotency keys.
 */
export class OrderManagement1732230000021 implements MigrationInterface {
  name = 'OrderManagement1732230000021';

  // eslint-disable-next-line max-lines-per-function -- one schema step, its statements in the order they must run
  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE instruments ADD COLUMN min_quantity numeric(20, 8) NOT NULL DEFAULT 1 CHECK (min_quantity > 0)');
    await q.query(
      'ALTER TABLE instruments ADD COLUMN max_quantity numeric(20, 8) NOT NULL DEFAULT 100000 CHECK (max_quantity >= min_quantity)',
    );
    await q.query(`
      CREATE TABLE market_clock (
        id int PRIMARY KEY CHECK (id = 1),
        step bigint NOT NULL DEFAULT 0,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query('INSERT INTO market_clock (id) VALUES (1)');

    await q.query("ALTER TABLE orders ALTER COLUMN status SET DEFAULT 'ACCEPTED'");
    await q.query(`ALTER TABLE orders
      ADD COLUMN user_id text,
      ADD COLUMN currency char(3),
      ADD COLUMN stop_price numeric(20, 8) CHECK (stop_price > 0),
      ADD COLUMN collar_price numeric(20, 8),
      ADD COLUMN hold_amount numeric(20, 8) CHECK (hold_amount > 0),
      ADD COLUMN filled_quantity numeric(20, 8) NOT NULL DEFAULT 0 CHECK (filled_quantity >= 0),
      ADD COLUMN filled_value numeric(40, 16) NOT NULL DEFAULT 0,
      ADD COLUMN gross_amount numeric(20, 8) NOT NULL DEFAULT 0,
      ADD COLUMN commission numeric(20, 8) NOT NULL DEFAULT 0,
      ADD COLUMN status_reason text,
      ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now(),
      ADD COLUMN submitted_at timestamptz,
      ADD COLUMN triggered_at timestamptz,
      ADD COLUMN filled_at timestamptz,
      ADD COLUMN cancelled_at timestamptz,
      ADD COLUMN expired_at timestamptz,
      ADD COLUMN rejected_at timestamptz,
      ADD COLUMN expires_at timestamptz,
      ADD COLUMN seq bigserial UNIQUE`);
    await q.query(`ALTER TABLE orders
      ADD CONSTRAINT orders_status_check CHECK (status IN ('ACCEPTED', 'NEW', 'PARTIALLY_FILLED', 'FILLED', 'CANCELLED', 'REJECTED', 'EXPIRED')),
      ADD CONSTRAINT orders_type_check CHECK (type IN ('MARKET', 'LIMIT', 'STOP', 'STOP_LIMIT')),
      ADD CONSTRAINT orders_tif_check CHECK (time_in_force IN ('DAY', 'GTC', 'IOC', 'FOK')),
      ADD CONSTRAINT orders_filled_check CHECK (filled_quantity <= quantity),
      ADD CONSTRAINT orders_filled_status_check CHECK ((status = 'FILLED') = (filled_quantity = quantity)),
      ADD CONSTRAINT orders_filled_at_check CHECK ((status = 'FILLED') = (filled_at IS NOT NULL)),
      ADD CONSTRAINT orders_cancelled_at_check CHECK ((status = 'CANCELLED') = (cancelled_at IS NOT NULL)),
      ADD CONSTRAINT orders_expired_at_check CHECK ((status = 'EXPIRED') = (expired_at IS NOT NULL)),
      ADD CONSTRAINT orders_rejected_at_check CHECK ((status = 'REJECTED') = (rejected_at IS NOT NULL)),
      ADD CONSTRAINT orders_buy_hold_check CHECK (side = 'SELL' OR status IN ('ACCEPTED', 'REJECTED') OR hold_amount IS NOT NULL),
      ADD CONSTRAINT orders_hold_covers_check CHECK (hold_amount IS NULL OR gross_amount + commission <= hold_amount)`);
    await q.query("CREATE INDEX orders_working_idx ON orders (symbol, seq) WHERE status IN ('NEW', 'PARTIALLY_FILLED')");
    await q.query('CREATE INDEX orders_account_seq_idx ON orders (account_id, seq DESC)');

    await q.query(`
      CREATE TABLE trades (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        seq bigserial UNIQUE,
        order_id uuid NOT NULL REFERENCES orders(id),
        account_id uuid NOT NULL,
        symbol text NOT NULL,
        side text NOT NULL CHECK (side IN ('BUY', 'SELL')),
        quantity numeric(20, 8) NOT NULL CHECK (quantity > 0),
        price numeric(20, 8) NOT NULL CHECK (price > 0),
        currency char(3) NOT NULL,
        gross_amount numeric(20, 8) NOT NULL CHECK (gross_amount >= 0),
        commission numeric(20, 8) NOT NULL CHECK (commission >= 0),
        net_amount numeric(20, 8) NOT NULL,
        executed_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query('CREATE INDEX trades_account_idx ON trades (account_id, seq DESC)');
    await q.query('CREATE INDEX trades_order_idx ON trades (order_id, seq)');

    // Written in the same transaction as the trade or the state change it announces.
    await q.query(`
      CREATE TABLE outbox (
        seq bigserial PRIMARY KEY,
        event_id uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
        type text NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        published_at timestamptz
      )`);
    await q.query('CREATE INDEX outbox_unpublished_idx ON outbox (seq) WHERE published_at IS NULL');

    await q.query(`
      CREATE TABLE order_idempotency_keys (
        user_id text NOT NULL,
        key text NOT NULL,
        request_hash text NOT NULL,
        order_id uuid NOT NULL REFERENCES orders(id) DEFERRABLE INITIALLY DEFERRED,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, key)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE order_idempotency_keys');
    await q.query('DROP TABLE outbox');
    await q.query('DROP TABLE trades');
    await q.query('DROP TABLE market_clock');
    await q.query(`ALTER TABLE orders DROP CONSTRAINT orders_status_check, DROP CONSTRAINT orders_type_check, DROP CONSTRAINT orders_tif_check,
      DROP CONSTRAINT orders_filled_check, DROP CONSTRAINT orders_filled_status_check, DROP CONSTRAINT orders_filled_at_check,
      DROP CONSTRAINT orders_cancelled_at_check, DROP CONSTRAINT orders_expired_at_check, DROP CONSTRAINT orders_rejected_at_check,
      DROP CONSTRAINT orders_buy_hold_check, DROP CONSTRAINT orders_hold_covers_check`);
    await q.query(`ALTER TABLE orders DROP COLUMN user_id, DROP COLUMN currency, DROP COLUMN stop_price, DROP COLUMN collar_price, DROP COLUMN hold_amount,
      DROP COLUMN filled_quantity, DROP COLUMN filled_value, DROP COLUMN gross_amount, DROP COLUMN commission, DROP COLUMN status_reason,
      DROP COLUMN updated_at, DROP COLUMN submitted_at, DROP COLUMN triggered_at, DROP COLUMN filled_at, DROP COLUMN cancelled_at,
      DROP COLUMN expired_at, DROP COLUMN rejected_at, DROP COLUMN expires_at, DROP COLUMN seq`);
    await q.query('ALTER TABLE instruments DROP COLUMN max_quantity, DROP COLUMN min_quantity');
  }
}
