import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The W3C trace context an order was placed under and a settlement event was written under
 * (null when tracing is off): a fill, made later by the engine, continues the order's trace,
 * and banking and accounts continue the fill's when they apply its event.
 */
export class TraceContext1732230000031 implements MigrationInterface {
  name = 'TraceContext1732230000031';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE orders ADD COLUMN trace_context text');
    await q.query('ALTER TABLE outbox ADD COLUMN trace_context text');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE outbox DROP COLUMN trace_context');
    await q.query('ALTER TABLE orders DROP COLUMN trace_context');
  }
}
