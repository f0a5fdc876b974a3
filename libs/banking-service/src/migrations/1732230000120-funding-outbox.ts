import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Banking's own outbox: events written in the same transaction as the funding change each
 * announces (a deposit or withdrawal reaching its end state), published to the event stream by
 * the outbox relay, signed with banking's key. The same shape as the OMS's outbox, so the one
 * relay serves both: `stream_entry_id` and `outbox_stream_position` let it find and publish
 * again what Redis lost after accepting it.
 */
export class FundingOutbox1732230000120 implements MigrationInterface {
  name = 'FundingOutbox1732230000120';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE outbox (
        seq bigserial PRIMARY KEY,
        event_id uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
        type text NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        published_at timestamptz,
        trace_context text,
        stream_entry_id text
      )`);
    await q.query('CREATE INDEX outbox_unpublished_idx ON outbox (seq) WHERE published_at IS NULL');
    await q.query(`
      CREATE TABLE outbox_stream_position (
        stream text PRIMARY KEY,
        seq bigint NOT NULL,
        entry_id text NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE outbox_stream_position');
    await q.query('DROP TABLE outbox');
  }
}
