import { randomUUID } from 'node:crypto';
import { deadLetterStream, listDeadLetters, replayDeadLetter } from './dead-letters';
import { describeEachEventLog, testConsumer } from './testing/event-logs';

describeEachEventLog('dead letters', (current) => {
  it('keep a refused event exactly as it came, with the reason, and replay it unchanged so the check runs again', async () => {
    const { log, stream } = current;
    const refused: string[] = [];
    const handled: string[] = [];
    let trusted = false;
    const consumer = testConsumer(current, {
      group: 'banking',
      refuse: () => (trusted ? null : 'signed with an unknown key'),
      onDeadLetter: (reason) => refused.push(reason),
      handle: async (e) => void handled.push(e.eventId),
    });
    await consumer.start();
    const forged = { eventId: randomUUID(), type: 'trade.executed', payload: { netAmount: '1000000.00' }, signature: 'k1.abc' };
    await log.append(stream, forged);
    for (let i = 0; i < 100 && !refused.length; i++) await new Promise((r) => setTimeout(r, 20));
    expect(refused).toEqual(['signed with an unknown key']);
    // The consumer says so first, then writes the dead letter, then acknowledges the entry: wait for that.
    for (let i = 0; i < 100 && (await log.pendingCount(stream, 'banking')) > 0; i++) await new Promise((r) => setTimeout(r, 20));

    // An operator lists it: the original event, why it was refused and by which group.
    const [dead, ...more] = await listDeadLetters(log, stream);
    expect(more).toEqual([]);
    expect(dead!.payload).toMatchObject({
      reason: 'signed with an unknown key',
      group: 'banking',
      type: 'trade.executed',
      payload: JSON.stringify(forged.payload),
      signature: 'k1.abc',
    });
    expect(await log.pendingCount(stream, 'banking')).toBe(0); // refused, not stuck

    // Replayed, it goes through the same check: here the key has since been trusted.
    trusted = true;
    await replayDeadLetter(log, stream, dead!.entryId);
    for (let i = 0; i < 100 && !handled.length; i++) await new Promise((r) => setTimeout(r, 20));
    await consumer.stop();
    expect(handled).toEqual([forged.eventId]);
    await expect(replayDeadLetter(log, stream, '99-0')).rejects.toThrow(`no dead letter 99-0 on ${deadLetterStream(stream)}`);
  });
});
