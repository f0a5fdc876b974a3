import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { DeliveredEvent, DomainEvent } from './event-log';
import { eventSignatureProblem, signEvent, type EventSigners } from './signature';

const keyOf = (kid: string) => ({ kid, ...generateKeyPairSync('ec', { namedCurve: 'P-256' }) });
const oms = keyOf('oms-2026');
const banking = keyOf('banking-2026');
const signers: EventSigners = new Map([
  [oms.kid, { service: 'oms', key: oms.publicKey }],
  [banking.kid, { service: 'banking', key: banking.publicKey }],
]);

const trade = (payload: Record<string, unknown> = { accountId: randomUUID(), netAmount: '-1000.00' }): DomainEvent => ({
  eventId: randomUUID(),
  type: 'trade.executed',
  payload,
});
/** As a consumer receives it: the payload text exactly as it travelled. */
const delivered = (event: DomainEvent, payloadJson = JSON.stringify(event.payload)): DeliveredEvent => ({
  ...event,
  entryId: '1-0',
  payloadJson,
});

describe('event signatures', () => {
  it("accept exactly what the producer signed, with the producer's key", () => {
    expect(eventSignatureProblem(delivered(signEvent(trade(), oms)), signers, 'oms')).toBeNull();
  });

  it('refuse an unsigned event, an unknown key and another service’s key', () => {
    expect(eventSignatureProblem(delivered(trade()), signers, 'oms')).toBe('unsigned');
    expect(eventSignatureProblem(delivered(signEvent(trade(), keyOf('oms-2026'))), signers, 'oms')).toBe('bad signature');
    expect(eventSignatureProblem(delivered(signEvent(trade(), keyOf('stolen'))), signers, 'oms')).toBe('signed with an unknown key');
    expect(eventSignatureProblem(delivered(signEvent(trade(), banking)), signers, 'oms')).toBe('signed by banking, not oms');
  });

  it('refuse a changed payload, type or id, and a genuine signature moved onto another event', () => {
    const genuine = signEvent(trade(), oms);
    const changed = { ...genuine, payload: { ...genuine.payload, netAmount: '1000.00' } };
    expect(eventSignatureProblem(delivered(changed), signers, 'oms')).toBe('bad signature');
    expect(eventSignatureProblem(delivered({ ...genuine, type: 'order.closed' }), signers, 'oms')).toBe('bad signature');
    expect(eventSignatureProblem(delivered({ ...genuine, eventId: randomUUID() }), signers, 'oms')).toBe('bad signature');
    const other = trade();
    expect(eventSignatureProblem(delivered({ ...other, signature: genuine.signature }), signers, 'oms')).toBe('bad signature');
  });

  it('check the payload text as it travelled, not a re-serialisation of what was parsed from it', () => {
    const genuine = signEvent(trade({ a: '1', b: '2' }), oms);
    // Same parsed payload, other text: not what the producer signed.
    expect(eventSignatureProblem(delivered(genuine, '{"b":"2","a":"1"}'), signers, 'oms')).toBe('bad signature');
    expect(eventSignatureProblem(delivered(genuine, '{"a":"1","b":"2"}'), signers, 'oms')).toBeNull();
  });
});
