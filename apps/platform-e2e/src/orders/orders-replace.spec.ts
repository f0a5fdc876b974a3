import { randomUUID } from 'node:crypto';
import Decimal from 'decimal.js';
import { openApiDocument } from '@trading/rest-facade-service';
import { http, openApiResponseValidator } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { expectInvariants, ServiceDatabases, settled } from '../support/invariants';
import { fund, startOrdersPlatform, until } from '../support/orders-platform';
import { admin } from '../support/oauth-helpers';
import { newUser } from '../support/pat-helpers';
import { patSession } from '../support/sessions';
import type { TestPlatform } from '../support/test-platform';

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

  /** A user of their own with a cash account funded with `amount`, and a READ_WRITE session: its balance is exact to the cent. */
  const trader = async (amount: string) => {
    const user = await newUser(p);
    const token = await patSession(p, user.email, 'READ_WRITE');
    const { body: account } = await admin(p, 'POST', '/accounts', { email: user.email, type: 'CASH', currency: 'USD' });
    await fund(p, token, account.accountId, amount);
    const accountId = account.accountId as string;
    return {
      accountId,
      place: (body: Record<string, unknown>) => http('POST', api('/oms/order'), { token, body: { accountId, ...body } }),
      replace: (body: Record<string, unknown>) => http('PUT', api('/oms/order'), { token, body: { accountId, ...body } }),
      cancel: (orderId: string) => http('DELETE', api('/oms/order'), { token, body: { orderId } }),
      order: (id: string) => http('GET', api(`/oms/${accountId}/order/${id}`), { token }).then((r) => r.body),
      balance: () => http('GET', api(`/banking/${accountId}/balance/USD`), { token }).then((r) => r.body),
    };
  };
  /** A BUY OCO on AAPL: a limit leg below the market (189.90, ask 190.00) and a stop leg above it. */
  const buyPair = (t: Awaited<ReturnType<typeof trader>>, quantity: string, limitPrice: string, stopPrice: string) =>
    t.place({
      symbol: 'AAPL',
      side: 'BUY',
      type: 'LIMIT',
      timeInForce: 'GTC',
      quantity,
      limitPrice,
      orderClass: 'OCO',
      stopLoss: { stopPrice },
    });

  it("a buy OCO's limit leg is replaced up and down within the pair, its hold moving with it; a raise the cash cannot cover is refused; it fills and nothing stays held", async () => {
    const t = await trader('3990.00');
    const oco = await buyPair(t, '10', '180.00', '200.00');
    // The legs hold their own cash: 10 at 180 and 0.90 of commission; 10 at the stop's collar,
    // 210.11 (the ask at the stop, 200.10, plus 5 %), and 1.05 of commission.
    expect(oco.body).toMatchObject({ status: 'NEW', orderClass: 'OCO', reservedAmount: '1800.90' });
    const stopLeg = oco.body.legs[0];
    expect(stopLeg).toMatchObject({ status: 'NEW', type: 'STOP', stopPrice: '200.00', reservedAmount: '2102.15' });
    const cash = (held: string) => ({ cash: '3990.00', held, availableToTrade: new Decimal('3990').minus(held).toFixed(2) });
    expect(await t.balance()).toMatchObject(cash('3903.05'));

    // Up: the replacement holds 10 at 186 (and 0.93), the old leg's hold goes back; the stop leg works on under it, as held.
    const up = await t.replace({ orderId: oco.body.id, limitPrice: '186.00' });
    expect(up.status).toBe(200);
    conforms('PUT', '/oms/order', 200, up.body);
    expect(up.body).toMatchObject({
      status: 'NEW',
      orderClass: 'OCO',
      side: 'BUY',
      quantity: '10',
      limitPrice: '186.00',
      reservedAmount: '1860.93',
      replaces: oco.body.id,
    });
    expect(await t.order(oco.body.id)).toMatchObject({
      status: 'CANCELLED',
      replacedBy: up.body.id,
      statusReason: `Replaced by order ${up.body.id}`,
    });
    expect((await t.order(up.body.id)).legs).toEqual([
      expect.objectContaining({ id: stopLeg.id, status: 'NEW', quantity: '10', reservedAmount: '2102.15' }),
    ]);
    expect(await t.balance()).toMatchObject(cash('3963.08'));

    // Down: 10 at 170 (and 0.85); the difference is available again.
    const down = await t.replace({ orderId: up.body.id, limitPrice: '170.00' });
    expect(down.body).toMatchObject({
      status: 'NEW',
      orderClass: 'OCO',
      limitPrice: '170.00',
      reservedAmount: '1700.85',
      replaces: up.body.id,
    });
    expect(await t.balance()).toMatchObject(cash('3803.00'));
    // Each order's hold once: the replaced ones gave theirs back whole (nothing filled), the pair holds its two legs.
    const holds = async () => {
      const ids = [oco.body.id, up.body.id, down.body.id, stopLeg.id];
      const rows = await db.query(
        'banking',
        'SELECT amount::text, state FROM holds WHERE order_id = ANY($1::text[]) ORDER BY array_position($1::text[], order_id)',
        [ids],
      );
      return rows.map((h) => [new Decimal(h.amount).toFixed(2), h.state]);
    };
    expect(await holds()).toEqual([
      ['1800.90', 'RELEASED'],
      ['1860.93', 'RELEASED'],
      ['1700.85', 'HELD'],
      ['2102.15', 'HELD'],
    ]);

    // The pair's price rules hold as on placing (a buy pair's limit below its stop), and a leg keeps the pair's quantity and time in force.
    expect((await t.replace({ orderId: down.body.id, limitPrice: '200.00' })).body).toMatchObject({
      status: 422,
      field: 'limitPrice',
      detail: 'limitPrice must be below the stop-loss stop 200 (the legs buy)',
    });
    expect((await t.replace({ orderId: stopLeg.id, stopPrice: '170.00' })).body).toMatchObject({
      status: 422,
      field: 'stopPrice',
      detail: 'stopPrice must be above the take-profit limit 170 (the legs buy)',
    });
    expect((await t.replace({ orderId: down.body.id, quantity: '5' })).body).toMatchObject({
      status: 422,
      field: 'quantity',
      detail: expect.stringMatching(/legs buy one quantity together/),
    });
    expect((await t.replace({ orderId: stopLeg.id, timeInForce: 'DAY' })).body).toMatchObject({ status: 422, field: 'timeInForce' });

    // 187.00 is free: 10 at 189 needs 190.10 more. Refused as a plain buy's raise is, and nothing changes.
    const refused = await t.replace({ orderId: down.body.id, limitPrice: '189.00' });
    expect(refused.body).toMatchObject({
      status: 422,
      field: 'quantity',
      detail: expect.stringMatching(/^Insufficient buying power: Insufficient funds: 1887\.85 USD available to trade/),
    });
    expect(await t.order(down.body.id)).toMatchObject({
      status: 'NEW',
      limitPrice: '170.00',
      reservedAmount: '1700.85',
      replacedBy: null,
      legs: [expect.objectContaining({ id: stopLeg.id, status: 'NEW', quantity: '10', reservedAmount: '2102.15' })],
    });
    expect(await t.balance()).toMatchObject(cash('3803.00'));
    const [rejected] = await db.query('oms', 'SELECT status FROM orders WHERE replaces_order_id = $1', [down.body.id]);
    expect(rejected).toEqual({ status: 'REJECTED' });

    // The replaced leg fills, 3 a pass (ask 169.99): each part brings the stop leg down to its remainder, its hold with it.
    await p.oms.engine.pause();
    try {
      await p.oms.feed.setPrice('AAPL', '169.90');
      await p.oms.engine.runOnce();
      expect(await t.order(down.body.id)).toMatchObject({ status: 'PARTIALLY_FILLED', filledQuantity: '3' });
      // 7 at 210.11 and 0.74 of commission.
      expect(await t.order(stopLeg.id)).toMatchObject({ status: 'NEW', quantity: '7', reservedAmount: '1471.51' });
      for (let i = 0; i < 3; i++) await p.oms.engine.runOnce();
      expect(await t.order(down.body.id)).toMatchObject({
        status: 'FILLED',
        filledQuantity: '10',
        grossAmount: '1699.90',
        commission: '0.85',
      });
      expect(await t.order(stopLeg.id)).toMatchObject({ status: 'CANCELLED', statusReason: `OCO: order ${down.body.id} filled` });
    } finally {
      await p.oms.feed.setPrice('AAPL', '189.90');
      p.oms.engine.resume();
    }
    // The pair closed: nothing held, the cash less exactly what the fills cost.
    await settled(db);
    expect(
      await until(
        () => t.balance(),
        (b) => b.held === '0.00',
        'no hold left',
      ),
    ).toMatchObject({ cash: '2289.25', held: '0.00', availableToTrade: '2289.25' });
    // The stop leg's hold came down with each part (to 1 at 210.11 and 0.11) before the pair closed.
    expect(await holds()).toEqual([
      ['1800.90', 'RELEASED'],
      ['1860.93', 'RELEASED'],
      ['1700.85', 'CAPTURED'],
      ['210.22', 'RELEASED'],
    ]);
    await expectInvariants(db);
  }, 60_000);

  it("a buy leg's replace that banking cannot finish keeps the pair as it is (the other leg neither fills nor is replaced); the engine finishes it once banking is back", async () => {
    const t = await trader('1000.00');
    const oco = await buyPair(t, '2', '150.00', '200.00');
    const stopLeg = oco.body.legs[0];
    await p.oms.engine.pause();
    const banking = p.services.banking;
    let replacementId: string;
    try {
      await banking.crash();
      const res = await t.replace({ orderId: oco.body.id, limitPrice: '160.00' });
      expect(res.body).toMatchObject({ status: 503 });
      // The first half committed: the replacement waits ACCEPTED for its hold, the old leg frozen.
      [{ id: replacementId }] = await db.query('oms', "SELECT id FROM orders WHERE replaces_order_id = $1 AND status = 'ACCEPTED'", [
        oco.body.id,
      ]);
      expect(await t.order(oco.body.id)).toMatchObject({ status: 'NEW', replacedBy: replacementId });
      expect((await t.replace({ orderId: stopLeg.id, stopPrice: '205.00' })).body).toMatchObject({
        status: 409,
        field: 'orderId',
        detail: "The pair's other leg is being replaced; try again in a moment",
      });
      // The stop is reached, but its leg waits: a fill now would take the frozen leg and its replacement with it.
      await p.oms.feed.setPrice('AAPL', '201.00'); // ask 201.11
      await p.oms.engine.runOnce();
      expect(await t.order(stopLeg.id)).toMatchObject({ status: 'NEW', filledQuantity: '0' });
    } finally {
      if (!banking.app) await banking.restart();
    }
    try {
      // The request that died is finished by the engine's sweep once it is old enough: then the stop leg fills and cancels the replacement.
      await db.query('oms', "UPDATE orders SET created_at = now() - interval '10 minutes' WHERE id = $1", [replacementId!]);
      await p.oms.engine.runOnce();
      expect(await t.order(oco.body.id)).toMatchObject({ status: 'CANCELLED', statusReason: `Replaced by order ${replacementId!}` });
      expect(await t.order(stopLeg.id)).toMatchObject({ status: 'FILLED', filledQuantity: '2', averageFillPrice: '201.11' });
      expect(await t.order(replacementId!)).toMatchObject({
        limitPrice: '160.00',
        reservedAmount: '320.16',
        status: 'CANCELLED',
        statusReason: `OCO: order ${stopLeg.id} filled`,
      });
    } finally {
      await p.oms.feed.setPrice('AAPL', '189.90');
      p.oms.engine.resume();
    }
    await settled(db);
    // 2 at 201.11 and 0.20 of commission.
    expect(
      await until(
        () => t.balance(),
        (b) => b.held === '0.00',
        'no hold left',
      ),
    ).toMatchObject({ cash: '597.58', availableToTrade: '597.58' });
  }, 60_000);

  it("the other leg cancelled while a buy leg's replace waits for banking: the pair ends, the replacement never works and holds nothing", async () => {
    const t = await trader('1000.00');
    const oco = await buyPair(t, '2', '150.00', '200.00');
    const stopLeg = oco.body.legs[0];
    await p.oms.engine.pause();
    const banking = p.services.banking;
    let replacementId: string;
    try {
      await banking.crash();
      expect((await t.replace({ orderId: oco.body.id, limitPrice: '160.00' })).body).toMatchObject({ status: 503 });
      [{ id: replacementId }] = await db.query('oms', 'SELECT id FROM orders WHERE replaces_order_id = $1', [oco.body.id]);
      // A cancel takes the pair: the frozen leg with it.
      expect((await t.cancel(stopLeg.id)).body).toMatchObject({ status: 'CANCELLED' });
      expect(await t.order(oco.body.id)).toMatchObject({ status: 'CANCELLED', statusReason: `OCO: order ${stopLeg.id} was cancelled` });
    } finally {
      if (!banking.app) await banking.restart();
    }
    try {
      await db.query('oms', "UPDATE orders SET created_at = now() - interval '10 minutes' WHERE id = $1", [replacementId!]);
      await p.oms.engine.runOnce();
    } finally {
      p.oms.engine.resume();
    }
    expect(await t.order(replacementId!)).toMatchObject({
      status: 'REJECTED',
      statusReason: `The order ${oco.body.id} it replaces was closed (CANCELLED) first`,
    });
    await settled(db);
    expect(
      await until(
        () => t.balance(),
        (b) => b.held === '0.00',
        'no hold left',
      ),
    ).toMatchObject({ cash: '1000.00', availableToTrade: '1000.00' });
    const [{ n }] = await db.query('banking', 'SELECT count(*)::int AS n FROM holds WHERE order_id = $1', [replacementId!]);
    expect(n).toBe(0);
    await expectInvariants(db);
  }, 60_000);
});
