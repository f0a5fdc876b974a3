import { randomUUID } from 'node:crypto';
import { describeEachEventLog, testConsumer, testEvent as event } from './testing/event-logs';

describeEachEventLog('stream consumer', (current) => {
  it('a consumer applies every event and acks after the handler; a failing handler sees the event again', async () => {
    const { log, stream } = current;
    const seen: number[] = [];
    let failOnce = true;
    const consumer = testConsumer(current, {
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
    const { log, stream } = current;
    const handled: string[] = [];
    const refused: string[] = [];
    const consumer = testConsumer(current, {
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

  it('a batch handler gets the batch together (ignored types and refused events left out) and the batch is acked after it, or seen again when it fails', async () => {
    const { log, stream } = current;
    const batches: string[][] = [];
    let failOnce = true;
    const consumer = testConsumer(current, {
      batchSize: 10,
      ignores: ['live.update'],
      refuse: (e) => (e.payload['forged'] ? 'forged' : null),
      handle: async () => {
        throw new Error('not used when handleBatch is given');
      },
      handleBatch: async (events) => {
        if (failOnce) {
          failOnce = false;
          throw new Error('transient');
        }
        batches.push(events.map((e) => `${e.type}:${e.payload['n']}`));
      },
    });
    await log.append(stream, { eventId: randomUUID(), type: 'trade', payload: { n: 1 } });
    await log.append(stream, { eventId: randomUUID(), type: 'live.update', payload: { n: 2 } });
    await log.append(stream, { eventId: randomUUID(), type: 'trade', payload: { n: 3, forged: true } });
    await log.append(stream, { eventId: randomUUID(), type: 'trade', payload: { n: 4 } });
    await consumer.start();
    for (let i = 0; i < 100 && (!batches.length || (await log.pendingCount(stream, 'g')) > 0); i++)
      await new Promise((r) => setTimeout(r, 50));
    await consumer.stop();
    expect(batches).toEqual([['trade:1', 'trade:4']]);
    expect(await log.pendingCount(stream, 'g')).toBe(0);
  });

  it('an aborted consumer acks nothing more: what it was handling and what it had read stay pending for its successor', async () => {
    const { log, stream } = current;
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const handling = new Promise<void>((r) => (started = r));
    const seen: number[] = [];
    const options = { consumer: 'c', batchSize: 10 };
    const first = testConsumer(current, {
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
    const second = testConsumer(current, { ...options, handle: async (e) => void again.push(e.payload['n'] as number) });
    await second.start();
    for (let i = 0; i < 100 && again.length < 3; i++) await new Promise((r) => setTimeout(r, 20));
    await second.stop();
    expect(again).toEqual([0, 1, 2]);
    expect(await log.pendingCount(stream, 'g')).toBe(0);
  });
});
