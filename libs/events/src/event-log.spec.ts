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
