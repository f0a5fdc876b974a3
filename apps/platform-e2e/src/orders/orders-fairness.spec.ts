import Decimal from 'decimal.js';
import { http } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { expectInvariants, ServiceDatabases, settled } from '../support/invariants';
import { fund, startOrdersPlatform, until } from '../support/orders-platform';
import { patSession } from '../support/sessions';
import type { TestPlatform } from '../support/test-platform';

const [alice, bob] = DEMO_USERS as [(typeof DEMO_USERS)[0], (typeof DEMO_USERS)[0]];
const aliceCash = DEMO_ACCOUNTS[0]!.id;
const aliceMargin = DEMO_ACCOUNTS[1]!.id; // holds 10 AAPL
const bobCash = DEMO_ACCOUNTS[2]!.id;

/**
 * Finding F5: one account's huge market buys took a symbol's whole liquidity pass after pass
 * (oldest first, one pool shared by buys and sells), so every other account's market order on
 * that symbol waited behind them. The engine now shares each pass's liquidity across accounts.
 */
describe('a fair engine under size', () => {
  let p: TestPlatform;
  let db: ServiceDatabases;
  let alices: string;
  let bobs: string;
  const huge: string[] = [];
  /** AAPL's quote at 1.00: buys fill at its ask, at most its ask size per pass (below the 1000 of liquidity). */
  let ask: { price: string; size: number };

  beforeAll(async () => {
    // The default liquidity (1000 per instrument per pass; the quoted size limits a pass below it); a cheap share so 100,000 of them stay under the order value cap.
    p = await startOrdersPlatform({ OMS_FILL_LIQUIDITY: '1000' });
    db = new ServiceDatabases(p);
    alices = await patSession(p, alice.email, 'READ_WRITE');
    bobs = await patSession(p, bob.email, 'READ_WRITE');
    await p.oms.feed.setPrice('AAPL', '1.00');
    const [quote] = (await http('GET', `${p.urls.api}/market/quotes?symbols=AAPL`, { token: alices })).body.quotes;
    ask = { price: quote.ask, size: Number(quote.askSize) };
    expect(ask.size).toBeLessThanOrEqual(1000);
    await fund(p, alices, aliceCash, '1000000');
    await fund(p, bobs, bobCash, '5000');
  }, 60_000);
  afterAll(async () => {
    p?.oms.engine.resume();
    await db?.end();
    await p?.stop();
  });

  const api = (path: string) => p.urls.api + path;
  const marketBuy = (token: string, accountId: string, quantity: string) =>
    http('POST', api('/oms/order'), {
      token,
      body: { accountId, symbol: 'AAPL', side: 'BUY', type: 'MARKET', timeInForce: 'DAY', quantity },
    });
  const order = async (token: string, accountId: string, id: string) =>
    (await http('GET', api(`/oms/${accountId}/order/${id}`), { token })).body;
  const hugeOrders = () => Promise.all(huge.map((id) => order(alices, aliceCash, id)));
  const hugeFilled = async () => (await hugeOrders()).reduce((sum, o) => sum.plus(o.filledQuantity), new Decimal(0));

  /** Alice's orders fill oldest first: some filled, at most one part-filled, the rest untouched; none beyond its quantity. */
  const expectTimePriority = async () => {
    const filled = (await hugeOrders()).map((o) => {
      expect(new Decimal(o.filledQuantity).lte(o.quantity)).toBe(true);
      return o.status === 'FILLED' ? 'full' : o.filledQuantity === '0' ? 'none' : 'part';
    });
    expect(filled.join(' ')).toMatch(/^(full )*(part )?(none ?)*$/);
  };

  it('abuse: five 100,000-share market buys by one account do not stall a 10-share market buy by another', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await marketBuy(alices, aliceCash, '100000');
      expect(res.status).toBe(201);
      huge.push(res.body.id);
    }
    await until(hugeFilled, (f) => f.gt(0), "alice's big buys to start filling");

    const small = await marketBuy(bobs, bobCash, '10');
    expect(small.status).toBe(201);
    const placedAt = Date.now();
    let status = '';
    while (Date.now() - placedAt < 1000) {
      status = (await order(bobs, bobCash, small.body.id)).status;
      if (status === 'FILLED') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect({ status, within: Date.now() - placedAt <= 1000 }).toEqual({ status: 'FILLED', within: true });
    expect(await order(bobs, bobCash, small.body.id)).toMatchObject({ filledQuantity: '10', averageFillPrice: ask.price });

    // The big buys keep filling, pass after pass, oldest first.
    const before = await hugeFilled();
    const later = await until(hugeFilled, (f) => f.gte(before.plus(3000)), "alice's big buys to keep filling");
    expect(later.lte(500_000)).toBe(true);
    await expectTimePriority();
  });

  it('each pass shares the liquidity equally across accounts, hands on what a small account leaves, and sells have their own', async () => {
    await p.oms.engine.pause();
    // The pool is the ask size (a whole number of hundreds): in tenths of it, so the shares are whole.
    const tenths = (n: number) => String((ask.size / 10) * n);
    try {
      const bigBuy = await marketBuy(bobs, bobCash, tenths(6));
      expect(bigBuy.status).toBe(201);
      const before = await hugeFilled();

      // Two accounts want more than half the pool: half each.
      await p.oms.engine.runOnce();
      expect((await order(bobs, bobCash, bigBuy.body.id)).filledQuantity).toBe(tenths(5));
      expect((await hugeFilled()).minus(before).toFixed()).toBe(tenths(5));

      // Bob now wants only a tenth: Alice gets the other nine. A sell of the same symbol fills too, from its own pool.
      const sell = await http('POST', api('/oms/order'), {
        token: alices,
        body: { accountId: aliceMargin, symbol: 'AAPL', side: 'SELL', type: 'MARKET', timeInForce: 'DAY', quantity: '5' },
      });
      expect(sell.status).toBe(201);
      await p.oms.engine.runOnce();
      expect((await order(bobs, bobCash, bigBuy.body.id)).status).toBe('FILLED');
      expect((await order(alices, aliceMargin, sell.body.id)).status).toBe('FILLED');
      expect((await hugeFilled()).minus(before).toFixed()).toBe(tenths(14));

      // Alone again, Alice's buys take the whole pool.
      await p.oms.engine.runOnce();
      expect((await hugeFilled()).minus(before).toFixed()).toBe(tenths(24));
      await expectTimePriority();
    } finally {
      p.oms.engine.resume();
    }
  });

  it('keeps the books exact: fills within quantities, holds captured for what filled, the ledger balanced', async () => {
    for (const id of huge) {
      const res = await http('DELETE', api('/oms/order'), { token: alices, body: { orderId: id } });
      expect([200, 409]).toContain(res.status); // 409: it filled meanwhile
    }
    await until(
      async () => (await http('GET', api(`/banking/${aliceCash}/balance/USD`), { token: alices })).body,
      (b) => b.held === '0.00',
      "alice's holds given back",
    );
    await settled(db);
    await expectInvariants(db);
  });
});
