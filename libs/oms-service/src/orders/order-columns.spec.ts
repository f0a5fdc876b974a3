import type { DataSource } from 'typeorm';
import { openDatabase } from '@trading/db';
import { columnListGaps, createTestDatabases, type TestDatabases } from '@trading/testing';
import { omsMigrations } from '../migrations';
import { ORDER_COLUMNS } from './order-store';

/** The placement's prepared statements name an order's columns: a migration that adds one must add it there too. */
describe('ORDER_COLUMNS', () => {
  let dbs: TestDatabases<'oms'>;
  let db: DataSource;

  beforeAll(async () => {
    dbs = await createTestDatabases(['oms']);
    db = await openDatabase({ url: dbs.urls.oms, entities: [], migrations: omsMigrations });
  }, 30_000);
  afterAll(async () => {
    await db?.destroy();
    await dbs?.drop();
  });

  it('names every column of the orders table, and no other', async () => {
    expect(await columnListGaps(db, 'orders', ORDER_COLUMNS)).toEqual({ missing: [], unknown: [] });
  });
});
