import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The execution engine's reads, every pass (5 a second per instance by default), find what can
 * act through these instead of reading every working order: a book of 25,000 resting limit
 * orders cost each pass about 50 ms of PostgreSQL CPU before (27 ms to find the marketable
 * orders, 19 to find the expired, 3 to find unconfirmed placements), whatever the market did.
 * Each index holds only working orders of one kind, ordered so that a pass reads a range per
 * instrument and side: what the price reaches, and nothing resting away from it.
 *
 * Built CONCURRENTLY, outside a transaction: a plain CREATE INDEX would hold every order write of
 * the running instances (placements wait, then fail on `lock_timeout`) for as long as it reads
 * the table's history. An index a failed run left invalid is dropped first and built again.
 */
export class EngineIndexes1732230000070 implements MigrationInterface {
  name = 'EngineIndexes1732230000070';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    const working = "status IN ('NEW', 'PARTIALLY_FILLED') AND replaced_by_order_id IS NULL";
    const create = async (index: string, definition: string) => {
      await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${index}`);
      await q.query(`CREATE INDEX CONCURRENTLY ${index} ON ${definition}`);
    };
    // Orders that trade at a price (market, limit, and stops once triggered): marketable ones are a range of limit_price.
    await create(
      'orders_marketable_idx',
      `orders (symbol, side, limit_price) WHERE ${working} AND (type IN ('MARKET', 'LIMIT') OR triggered_at IS NOT NULL)`,
    );
    // Stops waiting for their price: the reached ones are a range of stop_price.
    await create(
      'orders_untriggered_stop_idx',
      `orders (symbol, side, stop_price) WHERE ${working} AND type IN ('STOP', 'STOP_LIMIT', 'TRAILING_STOP') AND triggered_at IS NULL`,
    );
    // IOC and FOK orders act in their first pass whatever the price.
    await create('orders_immediate_idx', `orders (symbol) WHERE ${working} AND time_in_force IN ('IOC', 'FOK')`);
    // DAY orders past their session.
    await create('orders_expiring_idx', `orders (expires_at) WHERE ${working} AND expires_at IS NOT NULL`);
    // Placements not confirmed yet: a handful at any time, however long the history.
    await create('orders_accepted_idx', "orders (created_at) WHERE status = 'ACCEPTED'");
  }

  async down(q: QueryRunner): Promise<void> {
    for (const index of [
      'orders_accepted_idx',
      'orders_expiring_idx',
      'orders_immediate_idx',
      'orders_untriggered_stop_idx',
      'orders_marketable_idx',
    ])
      await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${index}`);
  }
}
