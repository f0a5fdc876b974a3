import { randomUUID } from 'node:crypto';
import { deadLetterStream, listDeadLetters, replayDeadLetter, signEvent, type DeliveredEvent } from '@trading/events';
import { http } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { startOrdersPlatform, until } from '../support/orders-platform';
import { patSession } from '../support/sessions';
import type { TestPlatform } from '../support/test-platform';

const [alice] = DEMO_USERS as [(typeof DEMO_USERS)[0]];
const aliceCash = DEMO_ACCOUNTS[0]!.id;

/** One XADD of a fake SELL once credited $1,000,000 of withdrawable cash. Now nothing moves on an event the OMS did not sign. */
describe('forged settlement events', () => {
  let p: TestPlatform;
  let writer: string;

  beforeAll(async () => {
    p = await startOrdersPlatform();
    writer = await patSession(p, alice.email, 'READ_WRITE');
  }, 60_000);
  afterAll(() => p?.stop());

  const balance = async () => (await http('GET', `${p.urls.api}/banking/${aliceCash}/balance/USD`, { token: writer })).body;
  const position = async () => (await http('GET', `${p.urls.api}/accounts/${aliceCash}/position?symbol=AAPL`, { token: writer })).body;
  const read = async (stream: string, group: string): Promise<DeliveredEvent[]> => {
    await p.events.log.ensureGroup(stream, group);
    return p.events.log.read(stream, group, 'spec', { count: 500, blockMs: 0, pending: false });
  };
  const forgedSell = (extra: Record<string, unknown> = {}) => {
    const eventId = randomUUID();
    return {
      eventId,
      type: 'trade.executed',
      payload: {
        eventId,
        type: 'trade.executed',
        occurredAt: new Date().toISOString(),
        trade: {
          id: randomUUID(),
          orderId: randomUUID(),
          accountId: aliceCash,
          symbol: 'AAPL',
          side: 'SELL',
          quantity: '5000',
          price: '200',
          currency: 'USD',
          grossAmount: '1000000.00',
          commission: '0.00',
          netAmount: '1000000.00',
          executedAt: new Date().toISOString(),
          ...extra,
        },
      },
    };
  };

  it('attack: unsigned, signed by another service, a genuine signature on another payload, or an off-contract payload: nothing is booked, each is dead-lettered with its reason, and settlement goes on', async () => {
    // A genuine, OMS-signed event to steal a signature from.
    await p.oms.feed.setPrice('AAPL', '100.00');
    const buy = await http('POST', `${p.urls.api}/oms/order`, {
      token: writer,
      body: { accountId: aliceCash, symbol: 'AAPL', side: 'BUY', type: 'MARKET', timeInForce: 'DAY', quantity: '1' },
    });
    expect(buy.status).toBe(201);
    await until(
      () => http('GET', `${p.urls.api}/oms/${aliceCash}/order/${buy.body.id}`, { token: writer }),
      (r) => r.body.status === 'FILLED',
      'the buy to fill',
    );
    const genuine = (
      await until(
        () => read(p.events.stream, `spy-${randomUUID()}`),
        (events) => events.some((e) => e.type === 'trade.executed'),
        'the fill on the stream',
      )
    ).find((e) => e.type === 'trade.executed')!;
    await until(position, (pos) => pos.quantity === '1', 'the position to settle');
    const cashBefore = (await until(balance, (b) => b.held === '0.00', 'the hold to settle')).cash;

    const bankingKey = p.identityOf('banking').SERVICE_KEY;
    const omsKey = p.identityOf('oms').SERVICE_KEY;
    const unsigned = forgedSell();
    const byBanking = signEvent(forgedSell(), bankingKey);
    const stolen = { ...forgedSell(), signature: genuine.signature };
    const offContract = signEvent(forgedSell({ grossAmount: '1e9' }), omsKey); // signed with the OMS's key, still refused
    const tamperedCopy = {
      eventId: genuine.eventId,
      type: genuine.type,
      payload: { ...genuine.payload, trade: { ...(genuine.payload['trade'] as object), side: 'SELL', grossAmount: '1000000.00' } },
      signature: genuine.signature,
    };
    for (const event of [unsigned, byBanking, stolen, offContract, tamperedCopy]) await p.events.log.append(p.events.stream, event);

    // A legitimate order after them still settles: the consumers were not stalled.
    const next = await http('POST', `${p.urls.api}/oms/order`, {
      token: writer,
      body: { accountId: aliceCash, symbol: 'AAPL', side: 'BUY', type: 'MARKET', timeInForce: 'DAY', quantity: '1' },
    });
    expect(next.status).toBe(201);
    await until(position, (pos) => pos.quantity === '2', 'the next fill to settle in accounts');
    const after = await until(balance, (b) => b.held === '0.00', 'the next hold to settle in banking');
    expect(Number(after.cash)).toBeLessThan(Number(cashBefore)); // it paid for the second share; the forged million never arrived
    expect(Number(after.availableToWithdraw)).toBeLessThan(Number(cashBefore));

    const dead = await until(
      () => read(deadLetterStream(p.events.stream), `dlq-${randomUUID()}`),
      (events) => events.length >= 10,
      'both consumers to dead-letter all five',
    );
    const reasons = (group: string) => dead.filter((d) => d.payload['group'] === group).map((d) => String(d.payload['reason']));
    for (const group of ['banking', 'accounts']) {
      expect(reasons(group)).toEqual([
        'unsigned',
        'signed by banking, not oms',
        'bad signature',
        'trade.grossAmount must be a non-negative decimal with at most 12 integer digits and 8 decimals',
        'bad signature',
      ]);
    }
  });

  it('shows dead letters on /metrics and to the operator, whose replay puts a forgery straight back among them', async () => {
    const metrics = await http('GET', `${p.internalUrls.banking}/metrics`);
    expect(metrics.body).toMatch(/settlement_dead_letters_total\{[^}]*group="banking"[^}]*\} 5/);
    expect(metrics.body).toMatch(/settlement_unapplied_events\{[^}]*group="banking"[^}]*\} 0/);
    const dead = await listDeadLetters(p.events.log, p.events.stream);
    expect(dead.length).toBe(10);
    const cashBefore = (await balance()).cash;
    await replayDeadLetter(p.events.log, p.events.stream, dead[0]!.entryId); // the unsigned sell
    await until(
      () => listDeadLetters(p.events.log, p.events.stream),
      (d) => d.length >= 12,
      'the replayed forgery to be refused again by both groups',
    );
    expect((await balance()).cash).toBe(cashBefore);
    await expect(replayDeadLetter(p.events.log, p.events.stream, '0-1')).rejects.toThrow(/no dead letter/);
  });
});
