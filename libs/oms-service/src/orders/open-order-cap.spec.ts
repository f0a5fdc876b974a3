import type { DataSource } from 'typeorm';
import { openDatabase } from '@trading/db';
import { createTestDatabases, type TestDatabases } from '@trading/testing';
import { checkOpenOrderCapSetting, omsMigrations, OPEN_ORDER_CAP_SETTING } from '../migrations';

/** The open-order cap travels to PostgreSQL as a session setting: the OMS refuses to start when it does not arrive. */
describe('the open-order cap setting', () => {
  let dbs: TestDatabases<'oms'>;
  let capped: DataSource;
  let bare: DataSource;

  beforeAll(async () => {
    dbs = await createTestDatabases(['oms']);
    capped = await openDatabase({
      url: dbs.urls.oms,
      entities: [],
      migrations: omsMigrations,
      settings: { [OPEN_ORDER_CAP_SETTING]: '7' },
    });
    // As behind a pooler that drops the startup option.
    bare = await openDatabase({ url: dbs.urls.oms, entities: [], migrations: omsMigrations });
  }, 30_000);
  afterAll(async () => {
    await capped?.destroy();
    await bare?.destroy();
    await dbs?.drop();
  });

  it('passes when every session carries the configured cap, and names the variable and the likely cause when not', async () => {
    await expect(checkOpenOrderCapSetting(capped, 7)).resolves.toBeUndefined();
    await expect(checkOpenOrderCapSetting(capped, 200)).rejects.toThrow(/OMS_MAX_OPEN_ORDERS_PER_ACCOUNT: .* = 7, not 200/);
    await expect(checkOpenOrderCapSetting(bare, 200)).rejects.toThrow(/= unset, not 200; .*connection pooler/);
  });

  /**
   * The count moves on every change of whether an order is open, and the trigger's function runs
   * for nothing else (migration 090): an order starting to work, or filling short of its last
   * share, used to run it only to return at once. `track_functions` counts the calls in the
   * transaction that makes each change.
   */
  it("counts an account's open orders through every change, running its function only for changes that move the count", async () => {
    const account = '00000000-0000-4000-8000-0000000000c1';
    const openCount = async () =>
      ((await capped.query('SELECT open FROM account_open_orders WHERE account_id = $1', [account])) as Array<{ open: number }>)[0]?.open ??
      0;
    /**
     * Runs `sql` in a transaction of its own; how many times the count's function ran for it. The
     * view's counts are those its backend has not yet reported, which can include an earlier
     * transaction's: the difference across the statement is this one's.
     */
    const calls = (sql: string, params: unknown[] = []) =>
      capped.transaction(async (tx) => {
        await tx.query("SET LOCAL track_functions = 'pl'");
        const count = async () =>
          (
            (await tx.query("SELECT calls::int AS calls FROM pg_stat_xact_user_functions WHERE funcname = 'count_open_orders'")) as Array<{
              calls: number;
            }>
          )[0]?.calls ?? 0;
        const before = await count();
        await tx.query(sql, params);
        return (await count()) - before;
      });
    const place = async (ref: string, status = 'ACCEPTED') => {
      const [{ id }] = (await capped.query(
        `INSERT INTO orders (account_id, client_order_id, symbol, side, type, time_in_force, quantity, limit_price, status, user_id, currency,
                             hold_amount, filled_quantity, filled_at)
         VALUES ($1, $2, 'AAA', 'BUY', 'LIMIT', 'GTC', 10, 5, $3, 'u1', 'USD', 60, CASE WHEN $3 = 'FILLED' THEN 10 ELSE 0 END,
                 CASE WHEN $3 = 'FILLED' THEN now() END)
         RETURNING id`,
        [account, ref, status],
      )) as Array<{ id: string }>;
      return id;
    };

    await capped.query(
      `INSERT INTO instruments (symbol, name, currency, tick_size, lot_size, last_price, previous_close, tradable)
       VALUES ('AAA', 'A', 'USD', 0.01, 1, 5, 5, true)`,
    );
    const first = await place('count-1');
    expect(await openCount()).toBe(1);
    // Starting to work, and a fill short of the last share: still open, and the function does not run.
    expect(await calls("UPDATE orders SET status = 'NEW', submitted_at = now() WHERE id = $1", [first])).toBe(0);
    expect(await calls("UPDATE orders SET status = 'PARTIALLY_FILLED', filled_quantity = 4 WHERE id = $1", [first])).toBe(0);
    expect(await openCount()).toBe(1);
    // Filled: no longer open.
    expect(await calls("UPDATE orders SET status = 'FILLED', filled_quantity = 10, filled_at = now() WHERE id = $1", [first])).toBe(1);
    expect(await openCount()).toBe(0);

    const second = await place('count-2');
    const third = await place('count-3');
    await place('count-4', 'FILLED');
    expect(await openCount()).toBe(2);
    // Being replaced takes an order out of the count; cancelled and deleted ones leave it too.
    expect(await calls('UPDATE orders SET replaced_by_order_id = $2 WHERE id = $1', [second, third])).toBe(1);
    expect(await openCount()).toBe(1);
    expect(await calls("UPDATE orders SET status = 'CANCELLED', cancelled_at = now() WHERE id = $1", [third])).toBe(1);
    expect(await openCount()).toBe(0);
    const fifth = await place('count-5');
    expect(await openCount()).toBe(1);
    expect(await calls('DELETE FROM orders WHERE id = $1', [fifth])).toBe(1);
    expect(await openCount()).toBe(0);
  });
});
