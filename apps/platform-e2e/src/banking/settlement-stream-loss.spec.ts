import { openRedisClient, type RedisClient } from '@trading/redis';
import { http, sampleValue, scrapeMetrics } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { expectInvariants, ServiceDatabases, settled, settlementProgress, stopStreamSpec } from '../support/invariants';
import { startOrdersPlatform, until } from '../support/orders-platform';
import { patSession } from '../support/sessions';
import type { TestPlatform } from '../support/test-platform';

/**
 * Redis acknowledges a stream entry before it is durable: it can come back without entries it
 * had accepted (restarted with no persistence, an append-only file that lost its last second, a
 * failover to a replica behind). Fills the OMS had published and banking and accounts had not
 * read yet would then never be booked: holds never captured, positions never moved. The relay
 * notices that the newest entry it recorded is gone and publishes the lost tail again; the
 * consumers' deduplication makes that exactly once.
 */
describe('orders: settlement survives Redis losing stream entries it had accepted', () => {
  let p: TestPlatform;
  let db: ServiceDatabases;
  let redis: RedisClient;
  let token: string;
  const account = DEMO_ACCOUNTS[1]!.id;

  beforeAll(async () => {
    p = await startOrdersPlatform({ OMS_FILL_LIQUIDITY: '100' });
    token = await patSession(p, DEMO_USERS[0]!.email, 'READ_WRITE');
    db = new ServiceDatabases(p);
    redis = await openRedisClient(p.config); // the platform's Redis, a Cluster too
  }, 60_000);
  afterAll(() => stopStreamSpec(p, db, redis));

  const consumers = () => [p.services.banking.app!.settlementConsumer, p.services.accounts.app!.settlementConsumer];
  const applied = async () => [
    (await db.query('banking', 'SELECT count(*)::int AS n FROM settlement_events'))[0].n as number,
    (await db.query('accounts', 'SELECT count(*)::int AS n FROM settlement_events'))[0].n as number,
  ];
  const republished = async () => sampleValue(await scrapeMetrics(`${p.internalUrls.oms}/metrics`), 'oms_outbox_republished_total') ?? NaN;

  /** With both settlement consumers stopped, `orders` market buys fill and the relay publishes every event they make. */
  async function fillsNobodyHasRead(orders: number): Promise<void> {
    await Promise.all(consumers().map((c) => c.stop()));
    const before = await settlementProgress(db);
    const appliedBefore = await applied();
    for (let i = 0; i < orders; i++) {
      const res = await http('POST', `${p.urls.api}/oms/order`, {
        token,
        body: { accountId: account, symbol: 'AAPL', side: 'BUY', type: 'MARKET', timeInForce: 'DAY', quantity: '1' },
      });
      expect(res.status).toBe(201);
    }
    // Every order filled and closed, and all that made is on the stream: nothing more comes.
    await until(
      async () => ({
        open: (await db.query('oms', "SELECT count(*)::int AS n FROM orders WHERE status IN ('ACCEPTED', 'NEW', 'PARTIALLY_FILLED')"))[0].n,
        ...(await settlementProgress(db)),
      }),
      (s) => s.open === 0 && s.trades >= before.trades + orders && s.unpublished === 0,
      'the fills to be published',
    );
    expect(await applied()).toEqual(appliedBefore); // nobody read them
  }

  it('a stream that came back empty: every event published in the window goes out again, and each is applied once', async () => {
    await fillsNobodyHasRead(5);
    const onStream = await redis.xLen(p.events.stream);
    expect(onStream).toBeGreaterThanOrEqual(10); // fills, order closes, live order events
    const before = await republished();

    await redis.del(p.events.stream); // what a Redis restarted without persistence holds of it: nothing
    await Promise.all(consumers().map((c) => c.start()));

    await settled(db);
    await expectInvariants(db);
    expect((await republished()) - before).toBeGreaterThanOrEqual(onStream);
  }, 60_000);

  it('a stream that lost its newest entries (the last second of an append-only file): exactly that tail goes out again', async () => {
    await fillsNobodyHasRead(4);
    const entries = (await redis.xRange(p.events.stream, '-', '+')) ?? [];
    const tail = entries.slice(-5);
    const before = await republished();

    await redis.xDel(
      p.events.stream,
      tail.map((e) => e.id),
    );
    await Promise.all(consumers().map((c) => c.start()));

    await settled(db);
    await expectInvariants(db);
    expect((await republished()) - before).toBe(tail.length);
    // The lost events are on the stream again (new entries), and nothing else was published twice.
    const after = (await redis.xRange(p.events.stream, '-', '+')) ?? [];
    const eventIds = after.map((e) => e.message['eventId']);
    for (const lost of tail) expect(eventIds.filter((id) => id === lost.message['eventId'])).toHaveLength(1);
    expect(after).toHaveLength(entries.length);
  }, 60_000);
});
