import { createClient } from 'redis';
import type { DataSource, MigrationInterface, QueryRunner } from 'typeorm';
import { generateServiceKey } from '@trading/auth';
import { openDatabase } from '@trading/db';
import { connectEventLog, type EventLog } from '@trading/events';
import { createLogger } from '@trading/logging';
import { createTestDatabases, TEST_REDIS_URL, testKeyPrefix, uniqueId, type TestDatabases } from '@trading/testing';
import { OutboxRelay } from './outbox-relay';

/** The outbox tables as a producing service's migrations leave them (the OMS's, banking's). */
class OutboxTables1732230000001 implements MigrationInterface {
  name = 'OutboxTables1732230000001';

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
    await q.query('CREATE TABLE outbox_stream_position (stream text PRIMARY KEY, seq bigint NOT NULL, entry_id text NOT NULL)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE outbox_stream_position');
    await q.query('DROP TABLE outbox');
  }
}

/**
 * The relay against real PostgreSQL and Redis: the stream holds the outbox in outbox order, also
 * with two instances relaying at once, and gets back what Redis lost after accepting it.
 */
describe('outbox relay', () => {
  let dbs: TestDatabases<'relay'>;
  let ds: DataSource;
  let events: EventLog;
  let redis: ReturnType<typeof createClient>;
  const stream = `${testKeyPrefix()}oms:events`;
  const key = generateServiceKey('oms');
  const logs: string[] = [];
  const logger = createLogger('oms', 'warn', { write: (line: string) => void logs.push(line) });
  const republished: number[] = [];
  const relay = (log: EventLog = events) => new OutboxRelay(ds, log, stream, 60_000, logger, key, (n) => republished.push(n));

  beforeAll(async () => {
    dbs = await createTestDatabases(['relay']);
    ds = await openDatabase({ url: dbs.urls.relay, entities: [], migrations: [OutboxTables1732230000001] });
    events = await connectEventLog(TEST_REDIS_URL);
    redis = createClient({ url: TEST_REDIS_URL });
    await redis.connect();
  }, 30_000);
  afterAll(async () => {
    await redis?.del(stream);
    redis?.destroy();
    await events?.close();
    await ds?.destroy();
    await dbs?.drop();
  });
  beforeEach(() => {
    logs.length = 0;
    republished.length = 0;
  });

  /** Writes `n` outbox rows as a producing service does in its transactions. */
  const write = (n: number) =>
    ds.query(
      "INSERT INTO outbox (type, payload) SELECT 'order.updated', jsonb_build_object('n', g) FROM generate_series(1, $1::int) AS g",
      [n],
    );
  const outbox = async () =>
    ((await ds.query('SELECT event_id::text FROM outbox ORDER BY seq')) as Array<{ event_id: string }>).map((r) => r.event_id);
  const onStream = async () => ((await redis.xRange(stream, '-', '+')) ?? []).map((e) => e.message['eventId']);

  it('publishes in outbox order and records the entry each row became, and where the stream ends', async () => {
    await write(5);
    expect(await relay().publishPending()).toBe(5);
    expect(await onStream()).toEqual(await outbox());
    const entries = ((await redis.xRange(stream, '-', '+')) ?? []).map((e) => e.id);
    const recorded = (await ds.query('SELECT stream_entry_id FROM outbox ORDER BY seq')).map(
      (r: { stream_entry_id: string }) => r.stream_entry_id,
    );
    expect(recorded).toEqual(entries);
    expect(await ds.query('SELECT entry_id FROM outbox_stream_position WHERE stream = $1', [stream])).toEqual([
      { entry_id: entries.at(-1) },
    ]);
  });

  it('two instances relaying at once: each row goes out once, and the stream keeps outbox order', async () => {
    await write(450); // more than one batch (200)
    const [a, b] = await Promise.all([relay().publishPending(), relay().publishPending()]);
    const rest = await relay().publishPending(); // a pass that met the other's lock left its share to the next pass
    expect(a + b + rest).toBe(450);
    expect(await onStream()).toEqual(await outbox());
    expect(republished).toEqual([]);
  });

  it('attack on durability: a stream that came back empty gets every row of the window again, in order, once', async () => {
    await redis.del(stream);
    const all = await outbox();
    expect(await relay().publishPending()).toBe(all.length);
    expect(await onStream()).toEqual(all);
    expect(republished).toEqual([all.length]);
    expect(logs.join('')).toContain('the settlement stream lost entries');
    // Nothing lost now: the next pass sends nothing again.
    expect(await relay().publishPending()).toBe(0);
    expect(republished).toEqual([all.length]);
  });

  it('a stream that lost its newest entries (an append-only file missing its last second) gets exactly that tail again', async () => {
    const before = (await redis.xRange(stream, '-', '+')) ?? [];
    await redis.xDel(
      stream,
      before.slice(-3).map((e) => e.id),
    );
    expect(await relay().publishPending()).toBe(3);
    expect(republished).toEqual([3]);
    expect(await onStream()).toEqual(await outbox());
  });

  it('attack on durability with two producers: another service published after the loss (banking beside the OMS), and the lost tail still goes out again', async () => {
    const before = (await redis.xRange(stream, '-', '+')) ?? [];
    await redis.xDel(
      stream,
      before.slice(-2).map((e) => e.id),
    );
    // The other producer's entry is the newest now: the stream's end alone would hide the loss.
    await redis.xAdd(stream, '*', { eventId: 'from-another-producer', type: 'funding.updated', payload: '{}' });
    expect(await relay().publishPending()).toBe(2);
    expect(republished).toEqual([2]);
    const mine = (await onStream()).filter((id) => id !== 'from-another-producer');
    expect(mine).toEqual(await outbox());
    expect(await relay().publishPending()).toBe(0);
    await redis.xDel(
      stream,
      ((await redis.xRange(stream, '-', '+')) ?? []).filter((e) => e.message['eventId'] === 'from-another-producer').map((e) => e.id),
    );
  });

  it('rows waiting when the loss is found go out after the lost ones, so the stream keeps outbox order', async () => {
    const before = (await redis.xRange(stream, '-', '+')) ?? [];
    await redis.xDel(
      stream,
      before.slice(-2).map((e) => e.id),
    );
    await write(3);
    expect(await relay().publishPending()).toBe(5);
    expect(republished).toEqual([2]);
    expect(await onStream()).toEqual(await outbox());
  });

  it('a Redis user that may only write the stream (an ACL from before this check) still publishes, and says once what to grant', async () => {
    const user = `oms-write-only-${uniqueId()}`;
    const password = uniqueId();
    await redis.sendCommand(['ACL', 'SETUSER', user, 'on', `>${password}`, 'resetkeys', `%W~${stream}`, '+@all', '-@dangerous', '+info']);
    const url = new URL(TEST_REDIS_URL);
    url.username = user;
    url.password = password;
    const writeOnly = await connectEventLog(url.toString());
    try {
      await expect(writeOnly.lastId(stream)).rejects.toThrow(/NOPERM/);
      const oms = relay(writeOnly);
      await write(2);
      expect(await oms.publishPending()).toBe(2);
      await write(1);
      expect(await oms.publishPending()).toBe(1);
      expect(await onStream()).toEqual(await outbox());
      expect(logs.filter((l) => l.includes("grant this service's Redis user read"))).toHaveLength(1); // once a minute, not every pass
    } finally {
      await writeOnly.close();
      await redis.sendCommand(['ACL', 'DELUSER', user]);
    }
  });
  it('an idle pass between the checks of the stream is one statement, not a transaction; a row written meanwhile goes out at the next pass', async () => {
    const r = relay();
    await write(1);
    await r.publishPending(); // a pass with rows: the stream checked, the row out
    const transaction = jest.spyOn(ds, 'transaction');
    const query = jest.spyOn(ds, 'query');
    try {
      expect(await r.publishPending()).toBe(0);
      expect({ transactions: transaction.mock.calls.length, statements: query.mock.calls.length }).toEqual({
        transactions: 0,
        statements: 1,
      });
      await write(2);
      const before = (await outbox()).slice(-2);
      expect(await r.publishPending()).toBe(2);
      expect(transaction).toHaveBeenCalledTimes(1);
      expect((await onStream()).slice(-2)).toEqual(before);
    } finally {
      transaction.mockRestore();
      query.mockRestore();
    }
  });
});
