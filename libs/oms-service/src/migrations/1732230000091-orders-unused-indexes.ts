import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two indexes on orders that no statement reads any more, each written by every placement and
 * every change of status (a status change is never a HOT update: status is in the partial
 * indexes' conditions): `orders_account_idx` (account_id, created_at), whose every use
 * `orders_account_seq_idx` (account_id, seq) serves, the listing being in seq order; and
 * `orders_working_idx` (symbol, seq) over working orders, which the engine's narrower indexes of
 * migration 070 replaced. Dropped CONCURRENTLY, outside a transaction, so running instances keep
 * writing orders meanwhile.
 */
export class OrdersUnusedIndexes1732230000091 implements MigrationInterface {
  name = 'OrdersUnusedIndexes1732230000091';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS orders_account_idx');
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS orders_working_idx');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_account_idx ON orders (account_id, created_at DESC)');
    await q.query(
      "CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_working_idx ON orders (symbol, seq) WHERE status IN ('NEW', 'PARTIALLY_FILLED')",
    );
  }
}
