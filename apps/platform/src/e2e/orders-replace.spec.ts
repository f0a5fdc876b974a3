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
      detail: expect.stringMatching(/BRACKET order's entry cannot be replaced/),
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

  it('the replacement carries the clientOrderId given, found by it; one the account has used is refused as on placing', async () => {
    const order = await limitBuy('1', '150.00');
    const clientOrderId = `replaced-${randomUUID()}`;
    const res = await replace({ accountId: aliceCash, orderId: order.body.id, limitPrice: '151.00', clientOrderId });
    expect(res.status).toBe(200);
    conforms('PUT', '/oms/order', 200, res.body);
    expect(res.body).toMatchObject({ clientOrderId, replaces: order.body.id, limitPrice: '151.00' });
    const found = await http('GET', api(`/oms/${aliceCash}/order/by-client-id/${clientOrderId}`), { token: writer });
    expect(found.body).toMatchObject({ id: res.body.id, clientOrderId });
    // Without one, a fresh id: neither the old order's nor the one given before.
    const fresh = await replace({ accountId: aliceCash, orderId: res.body.id, limitPrice: '152.00' });
    expect(fresh.body.clientOrderId).toMatch(/^[0-9a-f-]{36}$/);
    expect([order.body.clientOrderId, clientOrderId]).not.toContain(fresh.body.clientOrderId);
    // Used already (by the order it replaced, now cancelled): 409 as placing answers, the order left as it was.
    const other = await limitBuy('1', '140.00');
    const duplicate = await replace({ accountId: aliceCash, orderId: other.body.id, quantity: '2', clientOrderId });
    expect(duplicate.body).toMatchObject({
      status: 409,
      field: 'clientOrderId',
      detail: `clientOrderId ${clientOrderId} was already used for another order of this account`,
    });
    expect(await getOrder(aliceCash, other.body.id)).toMatchObject({ status: 'NEW', quantity: '1', replacedBy: null });
    const placed = await place({
      accountId: aliceCash,
      symbol: 'AAPL',
      side: 'BUY',
      type: 'LIMIT',
      timeInForce: 'GTC',
      quantity: '1',
      limitPrice: '150.00',
      clientOrderId,
    });
    expect(placed.body).toMatchObject({ status: 409, field: 'clientOrderId' });
    expect((await replace({ accountId: aliceCash, orderId: other.body.id, quantity: '2', clientOrderId: 'bad id' })).body).toMatchObject({
      status: 400,
      field: 'clientOrderId',
    });
    for (const o of [fresh.body.id, other.body.id]) await http('DELETE', api('/oms/order'), { token: writer, body: { orderId: o } });
  });

  it("a trailing stop's trail is replaced (trailPrice to trailPercent): the stop starts again from the current price", async () => {
    const trailing = await place({
      accountId: aliceMargin,
      symbol: 'AAPL',
      side: 'SELL',
      type: 'TRAILING_STOP',
      timeInForce: 'GTC',
      quantity: '2',
      trailPrice: '5.00',
    });
    expect(trailing.body).toMatchObject({ status: 'NEW', stopPrice: '184.90', trailPrice: '5.00' });
    const res = await replace({ accountId: aliceMargin, orderId: trailing.body.id, trailPercent: '2' });
    expect(res.status).toBe(200);
    conforms('PUT', '/oms/order', 200, res.body);
    // 189.90 less 2 % (3.798), down to the tick.
    expect(res.body).toMatchObject({
      status: 'NEW',
      type: 'TRAILING_STOP',
      trailPercent: '2',
      trailPrice: null,
      stopPrice: '186.10',
      highWaterMark: '189.90',
      replaces: trailing.body.id,
    });
    const id = res.body.id;
    expect((await replace({ accountId: aliceMargin, orderId: id, trailPercent: '2.0' })).body).toMatchObject({
      status: 422,
      field: 'body',
      detail: 'Nothing to change: the order already has these terms',
    });
    expect((await replace({ accountId: aliceMargin, orderId: id, trailPrice: '1', trailPercent: '3' })).body).toMatchObject({
      status: 400,
      field: 'trailPercent',
    });
    expect((await replace({ accountId: aliceMargin, orderId: id, stopPrice: '180.00' })).body).toMatchObject({
      status: 400,
      field: 'stopPrice',
    });
    const back = await replace({ accountId: aliceMargin, orderId: id, trailPrice: '1.50' });
    expect(back.body).toMatchObject({ trailPrice: '1.50', trailPercent: null, stopPrice: '188.40' });
    const limit = await limitBuy('1', '150.00');
    expect((await replace({ accountId: aliceCash, orderId: limit.body.id, trailPrice: '1.00' })).body).toMatchObject({
      status: 400,
      field: 'trailPrice',
    });
    for (const o of [back.body.id, limit.body.id]) await http('DELETE', api('/oms/order'), { token: writer, body: { orderId: o } });
  });

  it("an OCO's legs are replaced within the pair: prices checked against the other leg, the pair promising the holding once", async () => {
    const oco = await place({
      accountId: aliceMargin,
      symbol: 'AAPL',
      side: 'SELL',
      type: 'LIMIT',
      timeInForce: 'GTC',
      quantity: '4',
      limitPrice: '220.00',
      orderClass: 'OCO',
      stopLoss: { stopPrice: '150.00' },
    });
    expect(oco.body).toMatchObject({ status: 'NEW', orderClass: 'OCO' });
    const stopLeg = oco.body.legs[0];
    const stop = await replace({ accountId: aliceMargin, orderId: stopLeg.id, stopPrice: '160.00' });
    expect(stop.body).toMatchObject({
      status: 'NEW',
      orderClass: 'OCO',
      leg: 'STOP_LOSS',
      parentOrderId: oco.body.id,
      stopPrice: '160.00',
      quantity: '4',
    });
    expect(await getOrder(aliceMargin, stopLeg.id)).toMatchObject({
      status: 'CANCELLED',
      statusReason: `Replaced by order ${stop.body.id}`,
    });
    // The limit leg may not fall to the stop; naming the replace's field.
    expect((await replace({ accountId: aliceMargin, orderId: oco.body.id, limitPrice: '160.00' })).body).toMatchObject({
      status: 422,
      field: 'limitPrice',
      detail: expect.stringMatching(/above the stop-loss stop 160/),
    });
    expect((await replace({ accountId: aliceMargin, orderId: stop.body.id, timeInForce: 'DAY' })).body).toMatchObject({
      status: 422,
      field: 'timeInForce',
    });
    // The legs sell one quantity between them: a leg's quantity is not replaced on its own.
    expect((await replace({ accountId: aliceMargin, orderId: oco.body.id, quantity: '3', limitPrice: '215.00' })).body).toMatchObject({
      status: 422,
      field: 'quantity',
      detail: expect.stringMatching(/legs sell one quantity together/),
    });
    const limit = await replace({ accountId: aliceMargin, orderId: oco.body.id, limitPrice: '215.00' });
    expect(limit.body).toMatchObject({ status: 'NEW', orderClass: 'OCO', quantity: '4', limitPrice: '215.00' });
    // The replacement of the OCO's own order is the pair's parent now: the working stop leg is listed under it.
    expect((await getOrder(aliceMargin, limit.body.id)).legs.map((l: { id: string }) => l.id)).toEqual([stop.body.id]);
    const groups = await db.query('oms', 'SELECT DISTINCT oco_group_id FROM orders WHERE id = ANY($1::uuid[])', [
      [oco.body.id, stopLeg.id, stop.body.id, limit.body.id],
    ]);
    expect(groups).toEqual([{ oco_group_id: oco.body.id }]);
    // Still a pair: cancelling one leg takes the other with it.
    await http('DELETE', api('/oms/order'), { token: writer, body: { orderId: limit.body.id } });
    expect(await getOrder(aliceMargin, stop.body.id)).toMatchObject({
      status: 'CANCELLED',
      statusReason: `OCO: order ${limit.body.id} was cancelled`,
    });
  });

  it("a bracket's exits are replaced once the entry fills; the replaced exits still cancel each other", async () => {
    await p.oms.engine.pause();
    const bracket = await place({
      accountId: aliceCash,
      symbol: 'AAPL',
      side: 'BUY',
      type: 'LIMIT',
      timeInForce: 'GTC',
      quantity: '2',
      limitPrice: '190.00',
      orderClass: 'BRACKET',
      takeProfit: { limitPrice: '210.00' },
      stopLoss: { stopPrice: '140.00' },
    });
    // Waiting for the entry, an exit cannot be replaced yet.
    const waiting = bracket.body.legs.find((l: { leg: string }) => l.leg === 'TAKE_PROFIT');
    const early = await replace({ accountId: aliceCash, orderId: waiting.id, limitPrice: '205.00' });
    expect(early.body).toMatchObject({ status: 409, field: 'orderId', detail: expect.stringMatching(/waits for its entry to fill/) });
    p.oms.engine.resume();
    const entry = await until(
      () => getOrder(aliceCash, bracket.body.id),
      (o) => o.status === 'FILLED' && o.legs.every((l: { status: string }) => l.status === 'NEW'),
      'the entry to fill and its exits to work',
    );
    const exit = (leg: string) => entry.legs.find((l: { leg: string; replacedBy: string | null }) => l.leg === leg && !l.replacedBy);
    const tp = await replace({ accountId: aliceCash, orderId: exit('TAKE_PROFIT').id, limitPrice: '205.00' });
    expect(tp.status).toBe(200);
    expect(tp.body).toMatchObject({
      status: 'NEW',
      orderClass: 'BRACKET',
      leg: 'TAKE_PROFIT',
      parentOrderId: bracket.body.id,
      limitPrice: '205.00',
    });
    expect((await replace({ accountId: aliceCash, orderId: exit('STOP_LOSS').id, stopPrice: '205.00' })).body).toMatchObject({
      status: 422,
      field: 'stopPrice',
      detail: 'stopPrice must be below the take-profit limit 205 (the legs sell)',
    });
    const sl = await replace({ accountId: aliceCash, orderId: exit('STOP_LOSS').id, stopPrice: '150.00' });
    expect(sl.body).toMatchObject({
      status: 'NEW',
      orderClass: 'BRACKET',
      leg: 'STOP_LOSS',
      parentOrderId: bracket.body.id,
      stopPrice: '150.00',
    });
    expect((await replace({ accountId: aliceCash, orderId: tp.body.id, quantity: '1' })).body).toMatchObject({
      status: 422,
      field: 'quantity',
      detail: expect.stringMatching(/legs sell one quantity together/),
    });
    const whole = tp;
    // The replaced take-profit fills: the replaced stop-loss is cancelled with it.
    await p.oms.feed.setPrice('AAPL', '206.00'); // the bid reaches 205
    try {
      await until(
        () => getOrder(aliceCash, whole.body.id),
        (o) => o.status === 'FILLED',
        'the take-profit to fill',
      );
      expect(await getOrder(aliceCash, sl.body.id)).toMatchObject({
        status: 'CANCELLED',
        statusReason: `OCO: order ${whole.body.id} filled`,
      });
    } finally {
      await p.oms.feed.setPrice('AAPL', '189.90');
    }
  });

  it("an OTO's child is replaced as an order of its own once the entry fills, keeping its class and parent; the entry is refused", async () => {
    await p.oms.engine.pause();
    const oto = await place({
      accountId: aliceCash,
      symbol: 'AAPL',
      side: 'BUY',
      type: 'LIMIT',
      timeInForce: 'GTC',
      quantity: '1',
      limitPrice: '190.00',
      orderClass: 'OTO',
      takeProfit: { limitPrice: '215.00' },
    });
    expect(oto.status).toBe(201);
    expect((await replace({ accountId: aliceCash, orderId: oto.body.id, limitPrice: '189.00' })).body).toMatchObject({
      status: 422,
      field: 'orderId',
      detail: expect.stringMatching(/OTO order's entry cannot be replaced/),
    });
    p.oms.engine.resume();
    const entry = await until(
      () => getOrder(aliceCash, oto.body.id),
      (o) => o.status === 'FILLED' && o.legs.every((l: { status: string }) => l.status === 'NEW'),
      'the entry to fill and its child to work',
    );
    const child = entry.legs[0];
    const replaced = await replace({ accountId: aliceCash, orderId: child.id, limitPrice: '212.00' });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({
      status: 'NEW',
      orderClass: 'OTO',
      leg: 'TAKE_PROFIT',
      parentOrderId: oto.body.id,
      side: 'SELL',
      limitPrice: '212.00',
      quantity: '1',
    });
    expect(await getOrder(aliceCash, child.id)).toMatchObject({
      status: 'CANCELLED',
      statusReason: `Replaced by order ${replaced.body.id}`,
    });
    await http('DELETE', api('/oms/order'), { token: writer, body: { orderId: replaced.body.id } });
  });

  it('buy legs are refused naming orderId, the pair left as it was', async () => {
    const oco = await place({
      accountId: aliceCash,
      symbol: 'AAPL',
      side: 'BUY',
      type: 'LIMIT',
      timeInForce: 'GTC',
      quantity: '1',
      limitPrice: '150.00',
      orderClass: 'OCO',
      stopLoss: { stopPrice: '200.00' },
    });
    expect(oco.body).toMatchObject({ status: 'NEW', orderClass: 'OCO' });
    for (const id of [oco.body.id, oco.body.legs[0].id])
      expect((await replace({ accountId: aliceCash, orderId: id, quantity: '2' })).body).toMatchObject({
        status: 422,
        field: 'orderId',
        detail: expect.stringMatching(/OCO order's buy legs cannot be replaced yet/),
      });
    expect(await getOrder(aliceCash, oco.body.id)).toMatchObject({ status: 'NEW', quantity: '1', replacedBy: null });
    await http('DELETE', api('/oms/order'), { token: writer, body: { orderId: oco.body.id } });
  });
});
