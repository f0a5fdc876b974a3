import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Where each published outbox row went on the settlement stream, and the newest entry the relay
 * knows the stream holds. When Redis comes back without entries it had accepted (restarted empty,
 * an append-only file that lost its last second, a failover to a replica behind, a deleted
 * stream), the relay sees that entry is gone and publishes the lost rows again, instead of
 * leaving fills that banking and accounts never apply.
 */
export class OutboxStreamEntry1732230000032 implements MigrationInterface {
  name = 'OutboxStreamEntry1732230000032';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE outbox ADD COLUMN stream_entry_id text');
    await q.query(`
      CREATE TABLE outbox_stream_position (
        stream text PRIMARY KEY,
        seq bigint NOT NULL,
        entry_id text NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE outbox_stream_position');
    await q.query('ALTER TABLE outbox DROP COLUMN stream_entry_id');
  }
}
