import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The session setting (sent by each OMS instance at connect) that the cap below reads. */
export const OPEN_ORDER_CAP_SETTING = 'oms.max_open_orders';
/** The SQLSTATE the trigger raises when a new order would pass the cap (answered 422 naming accountId). */
export const OPEN_ORDER_CAP_SQLSTATE = 'OM001';

const OPEN = "IN ('ACCEPTED', 'NEW', 'PARTIALLY_FILLED')";

/**
 * Checks at start that the cap reaches the database's sessions: a connection pooler that drops
 * startup options would leave the trigger without a limit, and every account uncapped.
 */
export async function checkOpenOrderCapSetting(db: { query(sql: string): Promise<unknown> }, cap: number): Promise<void> {
  const [row] = (await db.query(`SELECT current_setting('${OPEN_ORDER_CAP_SETTING}', true) AS cap`)) as Array<{ cap: string | null }>;
  if (row?.cap !== String(cap))
    throw new Error(
      `OMS_MAX_OPEN_ORDERS_PER_ACCOUNT: the database session has ${OPEN_ORDER_CAP_SETTING} = ${row?.cap ?? 'unset'}, not ${cap}; ` +
        'something between the OMS and PostgreSQL (a connection pooler?) drops the startup option "options" the cap travels in',
    );
}

/**
 * Each account's working orders, counted by the database from the orders themselves: a trigger
 * moves the count on every insert, status change, replacement link and delete, so no code path
 * can miss it. Before this, every placement counted the account's open orders under an advisory
 * lock: a full book made each placement slower, and the lock was held while it counted.
 *
 * The cap: a new order (not a replacement, which swaps one working order for another) that takes
 * the count past the session's `oms.max_open_orders` is refused with SQLSTATE OM001. The count's
 * row lock, taken by the insert, serialises an account's placements until commit, so two can
 * never both slip past the cap.
 */
export class OpenOrderCount1732230000060 implements MigrationInterface {
  name = 'OpenOrderCount1732230000060';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE account_open_orders (
        account_id uuid PRIMARY KEY,
        open integer NOT NULL CHECK (open >= 0)
      )`);
    await q.query(`
      CREATE FUNCTION count_open_orders() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        was_open boolean := TG_OP <> 'INSERT' AND OLD.status ${OPEN} AND OLD.replaced_by_order_id IS NULL;
        is_open boolean := TG_OP <> 'DELETE' AND NEW.status ${OPEN} AND NEW.replaced_by_order_id IS NULL;
        total integer;
        cap integer;
      BEGIN
        IF TG_OP = 'UPDATE' AND was_open = is_open AND OLD.account_id = NEW.account_id THEN
          RETURN NULL;
        END IF;
        IF was_open THEN
          UPDATE account_open_orders SET open = open - 1 WHERE account_id = OLD.account_id;
        END IF;
        IF is_open THEN
          INSERT INTO account_open_orders AS c (account_id, open) VALUES (NEW.account_id, 1)
            ON CONFLICT (account_id) DO UPDATE SET open = c.open + 1
            RETURNING c.open INTO total;
          cap := nullif(current_setting('${OPEN_ORDER_CAP_SETTING}', true), '')::integer;
          IF TG_OP = 'INSERT' AND NEW.replaces_order_id IS NULL AND total > cap THEN
            RAISE EXCEPTION 'account % has % working orders, the most allowed', NEW.account_id, cap
              USING ERRCODE = '${OPEN_ORDER_CAP_SQLSTATE}', DETAIL = cap::text;
          END IF;
        END IF;
        RETURN NULL;
      END $$`);
    // Taken under the same lock as the backfill: no order can change between the count and the trigger.
    await q.query('LOCK TABLE orders IN SHARE ROW EXCLUSIVE MODE');
    await q.query(
      'CREATE TRIGGER orders_count_open AFTER INSERT OR UPDATE OR DELETE ON orders FOR EACH ROW EXECUTE FUNCTION count_open_orders()',
    );
    await q.query(`
      INSERT INTO account_open_orders (account_id, open)
      SELECT account_id, count(*) FROM orders WHERE status ${OPEN} AND replaced_by_order_id IS NULL GROUP BY account_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER orders_count_open ON orders');
    await q.query('DROP FUNCTION count_open_orders');
    await q.query('DROP TABLE account_open_orders');
  }
}
