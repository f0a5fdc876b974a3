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
});
