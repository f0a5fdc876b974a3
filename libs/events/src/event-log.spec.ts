import { createClient } from 'redis';
import { TEST_REDIS_URL, uniqueId } from '@trading/testing';
import { RedisEventLog } from './redis-event-log';
import { describeEachEventLog, testEvent as event } from './testing/event-logs';

describeEachEventLog('delivery', (current) => {
  it('delivers each entry to one consumer of a group, keeps it pending until acked and lets a restart read it again', async () => {
    const { log, stream } = current;
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
});

describeEachEventLog('reading without a group', (current) => {
  it('reads after an id, knows the newest id, and loses nothing while nothing was trimmed', async () => {
    const { log, stream } = current;
    expect([await log.lastId(stream), await log.lostAfter(stream, '0-0')]).toEqual(['0-0', false]); // no stream yet
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) ids.push(await log.append(stream, event(n)));
    expect((await log.after(stream, ids[0]!, { count: 10, blockMs: 0 })).map((e) => e.payload['n'])).toEqual([1, 2]);
    expect(await log.lastId(stream)).toBe(ids[2]);
    expect([await log.lostAfter(stream, '0-0'), await log.lostAfter(stream, ids[0]!)]).toEqual([false, false]);
  });
});

describe('RedisEventLog.lostAfter', () => {
  let log: RedisEventLog;
  let redis: ReturnType<typeof createClient>;
  let stream: string;
  const ids: string[] = [];
  beforeEach(async () => {
    log = await RedisEventLog.connect(TEST_REDIS_URL);
    redis = createClient({ url: TEST_REDIS_URL });
    await redis.connect();
    stream = `t:${uniqueId()}:events`;
    ids.length = 0;
    for (let n = 0; n < 5; n++) ids.push(await log.append(stream, event(n)));
  });
  afterEach(async () => {
    await redis.del(stream);
    redis.destroy();
    await log.close();
  });
  const lost = async () => Promise.all(ids.map((id) => log.lostAfter(stream, id)));

  it('an entry deleted: a reader resuming before it may have missed it, one resuming at or after it has not', async () => {
    await redis.xDel(stream, ids[2]!);
    expect(await lost()).toEqual([true, true, false, false, false]);
  });

  it('the stream trimmed (as XADD MAXLEN does): a reader resuming before the oldest entry kept may have missed some', async () => {
    await redis.xTrim(stream, 'MAXLEN', 2);
    expect(await lost()).toEqual([true, true, true, false, false]);
  });
});
