import { randomUUID } from 'node:crypto';
import Decimal from 'decimal.js';
import { openApiDocument } from '@trading/rest-facade-service';
import { http, openApiResponseValidator } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '../demo-data';
import { expectInvariants, ServiceDatabases, settled } from './invariants';
import { startOrdersPlatform, until } from './orders-platform';
import { patSession } from './sessions';
import type { TestPlatform } from './test-platform';

const conforms = openApiResponseValidator(openApiDocument);
const [alice] = DEMO_USERS as [(typeof DEMO_USERS)[0]];
const aliceCash = DEMO_ACCOUNTS[0]!.id; // 10000 USD, no positions
const aliceMargin = DEMO_ACCOUNTS[1]!.id; // AAPL 10, MSFT 5

/**
 * PUT /oms/order replaces a working order atomically: a new order carries the
 * remainder, the old one is CANCELLED with replacedBy, a buy's hold grows or shrinks in the
 * same banking step, and a replace racing a fill is either applied to the remainder or refused
 * with 409, never both.
 */
describe('orders: replace', () => {
  let p: TestPlatform;
  let db: ServiceDatabases;
  let writer: string;
  beforeAll(async () => {
    // Commission 0.05 % with no minimum (startOrdersPlatform); 3 per pass so a fill can be partial.
    p = await startOrdersPlatform({ OMS_FILL_LIQUIDITY: '3' });
    writer = await patSession(p, alice.email, 'READ_WRITE');
    db = new ServiceDatabases(p);
    await p.oms.feed.setPrice('AAPL', '189.90'); // ask 190.00: a buy limit of 190.00 fills
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await p?.stop();
  });
  afterEach(() => p.oms.engine.resume());

  const api = (path: string) => p.urls.api + path;
  const place = (body: Record<string, unknown>) => http('POST', api('/oms/order'), { token: writer, body });
  const replace = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    http('PUT', api('/oms/order'), { token: writer, body, headers });
  const getOrder = (accountId: string, id: string) =>
    http('GET', api(`/oms/${accountId}/order/${id}`), { token: writer }).then((r) => r.body);
  const balance = async (accountId: string) => (await http('GET', api(`/banking/${accountId}/balance/USD`), { token: writer })).body;
  const limitBuy = (quantity: string, limitPrice: string) =>
    place({ accountId: aliceCash, symbol: 'AAPL', side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', quantity, limitPrice });

  it('a resting buy grows, then shrinks: one new order each time, linked both ways; the hold follows in the same step', async () => {
    const before = await balance(aliceCash);
    const first = await limitBuy('5', '185.00');
    expect(first.body).toMatchObject({ status: 'NEW', reservedAmount: '925.46', replaces: null, replacedBy: null });
    const grown = await replace({ accountId: aliceCash, orderId: first.body.id, quantity: '8', limitPrice: '180.00' });
    expect(grown.status).toBe(200);
    conforms('PUT', '/oms/order', 200, grown.body);
    expect(grown.body).toMatchObject({
      status: 'NEW',
      quantity: '8',
      limitPrice: '180.00',
      reservedAmount: '1440.72',
      replaces: first.body.id,
    });
    expect(await getOrder(aliceCash, first.body.id)).toMatchObject({
      status: 'CANCELLED',
      replacedBy: grown.body.id,
      statusReason: `Replaced by order ${grown.body.id}`,
    });
    await until(
      () => balance(aliceCash),
      (b) => b.held === '1440.72',
      'the hold moved to the replacement',
    );
    const shrunk = await replace({ accountId: aliceCash, orderId: grown.body.id, quantity: '2' });
    expect(shrunk.body).toMatchObject({ status: 'NEW', quantity: '2', limitPrice: '180.00', reservedAmount: '360.18' });
    const after = await until(
      () => balance(aliceCash),
      (b) => b.held === '360.18',
      'the hold shrunk',
    );
    expect(after.cash).toBe(before.cash);
    expect(new Decimal(after.availableToTrade).plus(after.held).toFixed(2)).toBe(new Decimal(before.availableToTrade).toFixed(2));
    expect((await http('DELETE', api('/oms/order'), { token: writer, body: { orderId: shrunk.body.id } })).status).toBe(200);
  });

  it('a partly filled order: the filled part stays filled, the replacement carries the remainder; a quantity at or below the fills is 409', async () => {
    await p.oms.engine.pause();
    const order = await limitBuy('10', '190.00');
    await p.oms.engine.runOnce(); // 3 of 10 (liquidity 3)
    expect(await getOrder(aliceCash, order.body.id)).toMatchObject({ status: 'PARTIALLY_FILLED', filledQuantity: '3' });
    expect((await replace({ accountId: aliceCash, orderId: order.body.id, quantity: '3' })).body).toMatchObject({
      status: 409,
      field: 'quantity',
    });
    const res = await replace({ accountId: aliceCash, orderId: order.body.id, quantity: '12', limitPrice: '189.00' });
    expect(res.body).toMatchObject({ status: 'NEW', quantity: '9', filledQuantity: '0', limitPrice: '189.00', replaces: order.body.id });
    expect(await getOrder(aliceCash, order.body.id)).toMatchObject({ status: 'CANCELLED', filledQuantity: '3', replacedBy: res.body.id });
    await p.oms.engine.runOnce(); // the old order never fills again; the replacement does (the ask 190 > 189: not yet)
    expect(await getOrder(aliceCash, order.body.id)).toMatchObject({ filledQuantity: '3' });
    expect((await http('DELETE', api('/oms/order'), { token: writer, body: { orderId: res.body.id } })).status).toBe(200);
    // The old hold kept exactly what its 3 fills cost, the replacement's came back whole.
    await until(
      () => balance(aliceCash),
      (b) => b.held === '0.00',
      'no hold left',
    );
  });

  it('refuses with a problem naming the field, and leaves the order as it was', async () => {
    const order = await limitBuy('2', '150.00');
    const id = order.body.id;
    expect((await replace({ accountId: aliceCash, orderId: id })).body).toMatchObject({ status: 422, field: 'body' });
    expect((await replace({ accountId: aliceCash, orderId: id, quantity: '2', limitPrice: '150' })).body).toMatchObject({
      status: 422,
      field: 'body',
    });
    expect((await replace({ accountId: aliceCash, orderId: id, stopPrice: '150.00' })).body).toMatchObject({
      status: 400,
      field: 'stopPrice',
    });
    expect((await replace({ accountId: aliceCash, orderId: id, quantity: 'x' })).body).toMatchObject({ status: 400, field: 'quantity' });
    expect((await replace({ accountId: aliceCash, orderId: randomUUID(), quantity: '3' })).body).toMatchObject({
      status: 404,
      field: 'orderId',
    });
    expect((await replace({ accountId: aliceCash, orderId: id, limitPrice: '150.005' })).body).toMatchObject({
      status: 422,
      field: 'limitPrice',
    });
    // More than the cash: refused by banking, the old order works on with its hold.
    expect((await replace({ accountId: aliceCash, orderId: id, quantity: '300' })).body).toMatchObject({ status: 422, field: 'quantity' });
    expect(await getOrder(aliceCash, id)).toMatchObject({ status: 'NEW', quantity: '2', replacedBy: null });
    expect((await balance(aliceCash)).held).toBe('300.15');
    // A sell cannot grow beyond the position.
    const sell = await place({
      accountId: aliceMargin,
      symbol: 'AAPL',
      side: 'SELL',
      type: 'LIMIT',
      timeInForce: 'GTC',
      quantity: '4',
      limitPrice: '250.00',
    });
    expect((await replace({ accountId: aliceMargin, orderId: sell.body.id, quantity: '11' })).body).toMatchObject({
      status: 422,
      field: 'quantity',
    });
    const sold = await replace({ accountId: aliceMargin, orderId: sell.body.id, quantity: '10', limitPrice: '251.00' });
    expect(sold.body).toMatchObject({ status: 'NEW', quantity: '10', reservedAmount: null });
    // A cancelled order is closed: 409.
    expect((await replace({ accountId: aliceMargin, orderId: sell.body.id, quantity: '3' })).body).toMatchObject({
      status: 409,
      field: 'orderId',
    });
    for (const o of [id, sold.body.id]) await http('DELETE', api('/oms/order'), { token: writer, body: { orderId: o } });
  });

  it("attack: replacing a bracket's entry is refused naming orderId; the bracket keeps its class and both exits", async () => {
    const bracket = await place({
      accountId: aliceCash,
      symbol: 'AAPL',
      side: 'BUY',
      type: 'LIMIT',
      timeInForce: 'GTC',
      quantity: '1',
      limitPrice: '150.00',
      orderClass: 'BRACKET',
      takeProfit: { limitPrice: '210.00' },
      stopLoss: { stopPrice: '140.00' },
    });
    expect(bracket.body).toMatchObject({ status: 'NEW', orderClass: 'BRACKET' });
    const refused = await replace({ accountId: aliceCash, orderId: bracket.body.id, quantity: '2', limitPrice: '151.00' });
    expect(refused.body).toMatchObject({
      status: 422,
      code: 'UNPROCESSABLE',
      field: 'orderId',
      detail: expect.stringMatching(/BRACKET order's legs cannot be replaced/),
    });
    // Nothing was replaced: the entry works on as a bracket, and neither exit was cancelled.
    const after = await getOrder(aliceCash, bracket.body.id);
    expect(after).toMatchObject({ status: 'NEW', orderClass: 'BRACKET', quantity: '1', limitPrice: '150.00', replacedBy: null });
    expect(after.legs.map((l: { leg: string; status: string }) => [l.leg, l.status]).sort()).toEqual([
      ['STOP_LOSS', 'PENDING'],
      ['TAKE_PROFIT', 'PENDING'],
    ]);
    const [{ n }] = await db.query('oms', 'SELECT count(*)::int AS n FROM orders WHERE replaces_order_id = $1', [bracket.body.id]);
    expect(n).toBe(0);
    await http('DELETE', api('/oms/order'), { token: writer, body: { orderId: bracket.body.id } });
  });

  it('is idempotent: concurrent retries with one key answer one replacement; the key with another body is refused', async () => {
    const order = await limitBuy('1', '150.00');
    const key = { 'Idempotency-Key': `replace-${randomUUID()}` };
    const body = { accountId: aliceCash, orderId: order.body.id, limitPrice: '151.00' };
    const [a, b] = await Promise.all([replace(body, key), replace(body, key)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body.id).toBe(a.body.id);
    expect((await replace(body, key)).body.id).toBe(a.body.id);
    expect((await replace({ ...body, limitPrice: '152.00' }, key)).body).toMatchObject({ status: 422, field: 'idempotencyKey' });
    await http('DELETE', api('/oms/order'), { token: writer, body: { orderId: a.body.id } });
  });

  it('a replace racing a fill: either the replace takes the remainder or it is refused with 409, never both; holds and cash exact', async () => {
    await p.oms.feed.setPrice('AAPL', '189.90'); // ask 190.00
    const outcomes: string[] = [];
    for (let i = 0; i < 16; i++) {
      await p.oms.engine.pause();
      // 3 fills whole in one pass (liquidity 3), 6 in part; either side of the race goes first.
      const order = await limitBuy(i % 2 ? '6' : '3', '190.00');
      const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
      const [res] = await Promise.all([
        wait(i % 4 < 2 ? 0 : i % 3).then(() =>
          replace({ accountId: aliceCash, orderId: order.body.id, quantity: '5', limitPrice: '189.00' }),
        ),
        wait(i % 4 < 2 ? i % 3 : 0).then(() => p.oms.engine.runOnce()),
      ]);
      const old = await getOrder(aliceCash, order.body.id);
      if (res.status === 200) {
        outcomes.push(`replaced after ${old.filledQuantity}`);
        // The old order stopped where the replace found it; the replacement carries exactly the rest.
        expect(old).toMatchObject({ status: 'CANCELLED', replacedBy: res.body.id });
        expect(new Decimal(old.filledQuantity).plus(res.body.quantity).toString()).toBe('5');
        expect(old.fills.every((f: { executedAt: string }) => f.executedAt <= old.cancelledAt)).toBe(true);
        await http('DELETE', api('/oms/order'), { token: writer, body: { orderId: res.body.id } });
      } else {
        outcomes.push('refused');
        expect(res.body).toMatchObject({ status: 409, code: 'CONFLICT' });
        expect(old).toMatchObject({ status: 'FILLED', filledQuantity: '3', replacedBy: null });
      }
      p.oms.engine.resume();
    }
    expect(outcomes.length).toBe(16);
    // Everything settled: the ledger balances, every closed order's hold is released or captured
    // for exactly what its fills cost (the replaced ones included), nothing is left held.
    await settled(db);
    await until(
      () => balance(aliceCash),
      (b) => b.held === '0.00',
      'no hold left',
    );
    const [{ spent }] = await db.query(
      'oms',
      "SELECT coalesce(sum(gross_amount + commission), 0)::text AS spent FROM trades WHERE account_id = $1 AND side = 'BUY'",
      [aliceCash],
    );
    const b = await balance(aliceCash);
    expect(new Decimal(b.cash).toFixed(2)).toBe(new Decimal('10000').minus(spent).toFixed(2));
    await expectInvariants(db);
  }, 60_000);
});
