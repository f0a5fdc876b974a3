import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { createLogger } from '@trading/logging';
import { TEST_REDIS_URL, uniqueId } from '@trading/testing';
import { MemoryEventLog, RedisEventLog, StreamConsumer, type EventLog } from './index';

const event = (n: number) => ({ eventId: randomUUID(), type: 'test.happened', payload: { n } });

describe.each([
  ['memory', async () => new MemoryEventLog()],
  ['redis', async () => RedisEventLog.connect(TEST_REDIS_URL)],
])('%s event log', (_kind, open) => {
  let log: EventLog;
  let stream: string;
  beforeEach(async () => {
    log = await open();
    stream = `t:${uniqueId()}:events`;
  });
  afterEach(async () => {
    if (log.kind === 'redis') {
      const r = await createClient({ url: TEST_REDIS_URL }).connect();
      await r.del(stream);
      r.destroy();
    }
    await log.close();
  });

  it('delivers each entry to one consumer of a group, keeps it pending until acked and lets a restart read it again', async () => {
    await log.ensureGroup(stream, 'g');
    await log.ensureGroup(stream, 'g'); // twice is fine
    for (let n = 0; n < 3; n++) await log.append(stream, event(n));
    const first = await log.read(stream, 'g', 'c1', { count: 2, blockMs: 0, pending: false });
    expect(first.map((e) => e.payload['n'])).toEqual([0, 1]);
    await log.ack(stream, 'g', [first[0]!.entryId]);
    expect(await log.pendingCount(stream, 'g')).toBe(1);
    // "crash": the same consumer reads its pending entries again before anything new.
    expect((await log.read(stream, 'g', 'c1', { count: 10, blockMs: 0, pending: true })).map((e) => e.payload['n'])).toEqual([1]);
    expect((await log.read(stream, 'g', 'c1', { count: 10, blockMs: 0, pending: false })).map((e) => e.payload['n'])).toEqual([2]);
    // another consumer takes over entries left idle, and another group sees everything.
    expect((await log.claimStale(stream, 'g', 'c2', 0, 10)).map((e) => e.payload['n']).sort()).toEqual([1, 2]);
    await log.ensureGroup(stream, 'other');
    expect(await log.read(stream, 'other', 'x', { count: 10, blockMs: 0, pending: false })).toHaveLength(3);
  });

  it('a consumer applies every event and acks after the handler; a failing handler sees the event again', async () => {
    const seen: number[] = [];
    let failOnce = true;
    const consumer = new StreamConsumer({
      log,
      stream,
      group: 'g',
      logger: createLogger('events', 'silent'),
      blockMs: 50,
      handle: async (e) => {
        if (e.payload['n'] === 2 && failOnce) {
          failOnce = false;
          throw new Error('transient');
        }
        seen.push(e.payload['n'] as number);
      },
    });
    await consumer.start();
    for (let n = 0; n < 5; n++) await log.append(stream, event(n));
    for (let i = 0; i < 100 && seen.length < 5; i++) await new Promise((r) => setTimeout(r, 50));
    await consumer.stop();
    expect(seen).toEqual([0, 1, 2, 3, 4]);
    expect(await log.pendingCount(stream, 'g')).toBe(0);
  });

  it('reads past the types it ignores (acked, never checked or handled) and still refuses the rest', async () => {
    const handled: string[] = [];
    const refused: string[] = [];
    const consumer = new StreamConsumer({
      log,
      stream,
      group: 'g',
      logger: createLogger('events', 'silent'),
      blockMs: 50,
      ignores: ['live.update'],
      refuse: (e) => (e.payload['forged'] ? 'forged' : null),
      onDeadLetter: (reason) => refused.push(reason),
      handle: async (e) => void handled.push(`${e.type}:${e.payload['n']}`),
    });
    await consumer.start();
    await log.append(stream, { eventId: randomUUID(), type: 'live.update', payload: { n: 1, forged: true } });
    await log.append(stream, { eventId: randomUUID(), type: 'trade', payload: { n: 2 } });
    await log.append(stream, { eventId: randomUUID(), type: 'trade', payload: { n: 3, forged: true } });
    await log.append(stream, { eventId: randomUUID(), type: 'live.update', payload: { n: 4 } });
    for (let i = 0; i < 100 && (handled.length < 1 || refused.length < 1 || (await log.pendingCount(stream, 'g')) > 0); i++)
      await new Promise((r) => setTimeout(r, 50));
    await consumer.stop();
    expect({ handled, refused }).toEqual({ handled: ['trade:2'], refused: ['forged'] });
    expect(await log.pendingCount(stream, 'g')).toBe(0);
  });

  it('an aborted consumer acks nothing more: what it was handling and what it had read stay pending for its successor', async () => {
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const handling = new Promise<void>((r) => (started = r));
    const seen: number[] = [];
    const options = { log, stream, group: 'g', consumer: 'c', logger: createLogger('events', 'silent'), blockMs: 50, batchSize: 10 };
    const first = new StreamConsumer({
      ...options,
      handle: async (e) => {
        seen.push(e.payload['n'] as number);
        started();
        await blocked; // "in flight" when the crash comes
      },
    });
    for (let n = 0; n < 3; n++) await log.append(stream, event(n));
    await first.start(); // reads all three in one batch
    await handling;
    first.abort();
    release();
    await first.stop();
    expect(seen).toEqual([0]);
    expect(await log.pendingCount(stream, 'g')).toBe(3);

    // The next instance under the same name reads its pending entries again, then acks them.
    const again: number[] = [];
    const second = new StreamConsumer({ ...options, handle: async (e) => void again.push(e.payload['n'] as number) });
    await second.start();
    for (let i = 0; i < 100 && again.length < 3; i++) await new Promise((r) => setTimeout(r, 20));
    await second.stop();
    expect(again).toEqual([0, 1, 2]);
    expect(await log.pendingCount(stream, 'g')).toBe(0);
  });
});
