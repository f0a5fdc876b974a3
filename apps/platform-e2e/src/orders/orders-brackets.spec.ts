import { randomUUID } from 'node:crypto';
import Decimal from 'decimal.js';
import { openApiDocument } from '@trading/rest-facade-service';
import { http, openApiResponseValidator } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { expectInvariants, ServiceDatabases, settled } from '../support/invariants';
import { startOrdersPlatform, until } from '../support/orders-platform';
import { patSession } from '../support/sessions';
import type { TestPlatform } from '../support/test-platform';

const conforms = openApiResponseValidator(openApiDocument);
const [alice] = DEMO_USERS as [(typeof DEMO_USERS)[0]];
const aliceCash = DEMO_ACCOUNTS[0]!.id; // 10000 USD, no positions
const aliceMargin = DEMO_ACCOUNTS[1]!.id; // AAPL 10, MSFT 5

type Order = Record<string, any>;

/**
 * BRACKET (entry + take-profit + stop-loss that start when it fills and cancel
 * each other), OCO (two legs that cancel each other) and OTO (entry + one child).
 */
describe('orders: brackets, OCO and OTO', () => {
  let p: TestPlatform;
  let db: ServiceDatabases;
  let writer: string;
  beforeAll(async () => {
    p = await startOrdersPlatform({ OMS_FILL_LIQUIDITY: '100' });
    writer = await patSession(p, alice.email, 'READ_WRITE');
    db = new ServiceDatabases(p);
    await p.oms.feed.setPrice('AAPL', '190.00');
    await p.oms.feed.setPrice('MSFT', '400.00');
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await p?.stop();
  });

  const api = (path: string) => p.urls.api + path;
  const place = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    http('POST', api('/oms/order'), { token: writer, body, headers });
  const getOrder = (accountId: string, id: string): Promise<Order> =>
    http('GET', api(`/oms/${accountId}/order/${id}`), { token: writer }).then((r) => r.body);
  const waitFor = (accountId: string, id: string, status: string) =>
    until(
      () => getOrder(accountId, id),
      (o) => o['status'] === status,
      `order ${id} ${status}`,
    );
  const balance = (accountId: string) => http('GET', api(`/banking/${accountId}/balance/USD`), { token: writer }).then((r) => r.body);
  const leg = (o: Order, name: string): Order => o['legs'].find((l: Order) => l['leg'] === name);
  const noHoldLeft = (accountId: string) =>
    until(
      () => balance(accountId),
      (b) => b.held === '0.00',
      'no hold left',
    );

  it('a bracket whose take-profit fills cancels its stop-loss, exactly once', async () => {
    const res = await place({
      accountId: aliceCash,
      symbol: 'AAPL',
      side: 'BUY',
      type: 'MARKET',
      timeInForce: 'DAY',
      quantity: '2',
      orderClass: 'BRACKET',
      takeProfit: { limitPrice: '200.00' },
      stopLoss: { stopPrice: '180.00' },
    });
    expect(res.status).toBe(201);
    conforms('POST', '/oms/order', 201, res.body);
    expect(res.body).toMatchObject({ orderClass: 'BRACKET', side: 'BUY' });
    expect(leg(res.body, 'TAKE_PROFIT')).toMatchObject({
      status: 'PENDING',
      side: 'SELL',
      type: 'LIMIT',
      limitPrice: '200.00',
      quantity: '2',
    });
    expect(leg(res.body, 'STOP_LOSS')).toMatchObject({
      status: 'PENDING',
      side: 'SELL',
      type: 'STOP',
      stopPrice: '180.00',
      reservedAmount: null,
    });
    const entry = await waitFor(aliceCash, res.body.id, 'FILLED');
    const tp = leg(entry, 'TAKE_PROFIT');
    const sl = leg(entry, 'STOP_LOSS');
    expect([tp.status, sl.status]).toEqual(['NEW', 'NEW']);
    await new Promise((r) => setTimeout(r, 300));
    await p.oms.feed.setPrice('AAPL', '200.61'); // bid 200.50: the take-profit sells at the bid
    expect(await waitFor(aliceCash, tp.id, 'FILLED')).toMatchObject({ averageFillPrice: '200.50', parentOrderId: res.body.id });
    const cancelled = await waitFor(aliceCash, sl.id, 'CANCELLED');
    expect(cancelled.statusReason).toBe(`OCO: order ${tp.id} filled`);
    expect(cancelled.fills).toEqual([]);
    // The price falls through the old stop: nothing more happens.
    await p.oms.feed.setPrice('AAPL', '179.00');
    await new Promise((r) => setTimeout(r, 300));
    expect(await getOrder(aliceCash, sl.id)).toMatchObject({ status: 'CANCELLED', filledQuantity: '0' });
    const [{ n }] = await db.query(
      'oms',
      "SELECT count(*)::int AS n FROM outbox WHERE type = 'order.updated' AND payload->'order'->>'id' = $1 AND payload->'order'->>'status' = 'CANCELLED'",
      [sl.id],
    );
    expect(n).toBe(1);
    await noHoldLeft(aliceCash);
    await p.oms.feed.setPrice('AAPL', '190.00');
  });

  it('cancelling the entry cancels its pending children', async () => {
    const res = await place({
      accountId: aliceCash,
      symbol: 'AAPL',
      side: 'BUY',
      type: 'LIMIT',
      limitPrice: '150.00',
      timeInForce: 'GTC',
      quantity: '1',
      orderClass: 'BRACKET',
      takeProfit: { limitPrice: '210.00' },
      stopLoss: { stopPrice: '140.00', limitPrice: '139.00' },
    });
    expect(leg(res.body, 'STOP_LOSS')).toMatchObject({ type: 'STOP_LIMIT', limitPrice: '139.00' });
    const cancel = await http('DELETE', api('/oms/order'), { token: writer, body: { orderId: res.body.id } });
    expect(cancel.body.legs.map((l: Order) => l['status'])).toEqual(['CANCELLED', 'CANCELLED']);
    await noHoldLeft(aliceCash);
  });

  it('OCO: two sells of one position working at once, counted once against it; the stop fills and the limit is cancelled', async () => {
    const res = await place({
      accountId: aliceMargin,
      symbol: 'AAPL',
      side: 'SELL',
      type: 'LIMIT',
      limitPrice: '210.00',
      timeInForce: 'GTC',
      quantity: '5',
      orderClass: 'OCO',
      stopLoss: { stopPrice: '170.00' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'NEW', orderClass: 'OCO' });
    const stop = leg(res.body, 'STOP_LOSS');
    expect(stop).toMatchObject({ status: 'NEW', side: 'SELL', type: 'STOP', quantity: '5' });
    // The position is 10: the OCO promises 5 of it once, so 5 more may be sold, not 6.
    const more = { accountId: aliceMargin, symbol: 'AAPL', side: 'SELL', type: 'LIMIT', limitPrice: '250.00', timeInForce: 'GTC' };
    expect((await place({ ...more, quantity: '6' })).body).toMatchObject({ status: 422, field: 'quantity' });
    const five = await place({ ...more, quantity: '5' });
    expect(five.status).toBe(201);
    await http('DELETE', api('/oms/order'), { token: writer, body: { orderId: five.body.id } });
    await p.oms.feed.setPrice('AAPL', '169.59'); // at or below the stop; bid 169.50
    expect(await waitFor(aliceMargin, stop.id, 'FILLED')).toMatchObject({ averageFillPrice: '169.50' });
    expect(await waitFor(aliceMargin, res.body.id, 'CANCELLED')).toMatchObject({
      filledQuantity: '0',
      statusReason: `OCO: order ${stop.id} filled`,
    });
    await p.oms.feed.setPrice('AAPL', '190.00');
  });

  it('attack: an OCO selling more than the position is refused whole; its stop leg never works on its own (no short sale)', async () => {
    const res = await place({
      accountId: aliceMargin,
      symbol: 'MSFT', // 5 held
      side: 'SELL',
      type: 'LIMIT',
      limitPrice: '450.00',
      timeInForce: 'GTC',
      quantity: '6',
      orderClass: 'OCO',
      stopLoss: { stopPrice: '390.00' },
    });
    expect(res.body).toMatchObject({ status: 422, field: 'quantity' });
    const group = await db.query(
      'oms',
      "SELECT leg, status FROM orders WHERE account_id = $1 AND symbol = 'MSFT' AND order_class = 'OCO' ORDER BY seq",
      [aliceMargin],
    );
    expect(group).toEqual([
      { leg: null, status: 'REJECTED' },
      { leg: 'STOP_LOSS', status: 'REJECTED' },
    ]);
    // The price crosses the stop: nothing sells (before the fix, the leg filled and left the account short).
    await p.oms.feed.setPrice('MSFT', '380.00');
    await new Promise((r) => setTimeout(r, 1500));
    expect(await db.query('oms', "SELECT count(*)::int AS n FROM trades WHERE account_id = $1 AND symbol = 'MSFT'", [aliceMargin])).toEqual(
      [{ n: 0 }],
    );
    await p.oms.feed.setPrice('MSFT', '400.00');
  });

  it('OTO with a buy-side child: a sell entry whose buy-back holds its cash when placed; cancelling the child cancels nothing else', async () => {
    const before = await balance(aliceMargin);
    const res = await place({
      accountId: aliceMargin,
      symbol: 'MSFT',
      side: 'SELL',
      type: 'MARKET',
      timeInForce: 'DAY',
      quantity: '2',
      orderClass: 'OTO',
      takeProfit: { limitPrice: '380.00' },
    });
    expect(res.status).toBe(201);
    const child = leg(res.body, 'TAKE_PROFIT');
    expect(child).toMatchObject({ side: 'BUY', type: 'LIMIT', status: 'PENDING', reservedAmount: '760.38' });
    expect(new Decimal(before.held).plus('760.38').toFixed(2)).toBe((await balance(aliceMargin)).held);
    await waitFor(aliceMargin, res.body.id, 'FILLED');
    await waitFor(aliceMargin, child.id, 'NEW');
    expect((await http('DELETE', api('/oms/order'), { token: writer, body: { orderId: child.id } })).body).toMatchObject({
      status: 'CANCELLED',
    });
    await noHoldLeft(aliceMargin);
  });

  it('refuses with a problem naming the field', async () => {
    const entry = {
      accountId: aliceCash,
      symbol: 'AAPL',
      side: 'BUY',
      type: 'LIMIT',
      limitPrice: '185.00',
      timeInForce: 'GTC',
      quantity: '1',
    };
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ ...entry, orderClass: 'BRACKET', takeProfit: { limitPrice: '200.00' } }, 400, 'stopLoss'],
      [{ ...entry, takeProfit: { limitPrice: '200.00' } }, 400, 'takeProfit'],
      [
        { ...entry, orderClass: 'BRACKET', takeProfit: { limitPrice: '170.00' }, stopLoss: { stopPrice: '180.00' } },
        422,
        'stopLoss.stopPrice',
      ],
      [
        { ...entry, orderClass: 'BRACKET', takeProfit: { limitPrice: '200.005' }, stopLoss: { stopPrice: '180.00' } },
        422,
        'takeProfit.limitPrice',
      ],
      [{ ...entry, orderClass: 'BRACKET', takeProfit: { limitPrice: '200.00' }, stopLoss: { stopPrice: 'x' } }, 400, 'stopLoss.stopPrice'],
      [
        { ...entry, orderClass: 'BRACKET', timeInForce: 'IOC', takeProfit: { limitPrice: '200.00' }, stopLoss: { stopPrice: '180.00' } },
        422,
        'timeInForce',
      ],
      [{ ...entry, orderClass: 'OTO', takeProfit: { limitPrice: '200.00' }, stopLoss: { stopPrice: '180.00' } }, 400, 'stopLoss'],
      [
        { ...entry, type: 'STOP', limitPrice: undefined, stopPrice: '195.00', orderClass: 'OCO', stopLoss: { stopPrice: '180.00' } },
        422,
        'type',
      ],
      [{ ...entry, orderClass: 'FANCY' }, 400, 'orderClass'],
    ];
    for (const [body, status, field] of cases)
      expect({ body, answer: (await place(body)).body }).toMatchObject({ answer: { status, field } });
  });

  it('what-if and rules cover the classes; a retry with the Idempotency-Key answers the same bracket', async () => {
    const rules = (await http('GET', api(`/oms/${aliceCash}/order/rules?symbol=AAPL`), { token: writer })).body;
    expect(rules.orderClasses).toEqual(['SIMPLE', 'BRACKET', 'OCO', 'OTO']);
    const body = {
      accountId: aliceCash,
      symbol: 'AAPL',
      side: 'BUY',
      type: 'LIMIT',
      limitPrice: '150.00',
      timeInForce: 'GTC',
      quantity: '1',
      orderClass: 'BRACKET',
      takeProfit: { limitPrice: '210.00' },
      stopLoss: { stopPrice: '140.00' },
    };
    const whatIf = await http('POST', api('/oms/what-if'), { token: writer, body });
    conforms('POST', '/oms/what-if', 200, whatIf.body);
    expect(whatIf.body).toMatchObject({ orderClass: 'BRACKET', wouldBeRejected: false, reservedAmount: '150.08' });
    expect(whatIf.body.legs).toEqual([
      expect.objectContaining({ leg: 'TAKE_PROFIT', side: 'SELL', type: 'LIMIT', limitPrice: '210.00', startsWhen: 'the order fills' }),
      expect.objectContaining({ leg: 'STOP_LOSS', side: 'SELL', type: 'STOP', stopPrice: '140.00', reservedAmount: '0.00' }),
    ]);
    const key = { 'Idempotency-Key': `bracket-${randomUUID()}` };
    const [a, b] = await Promise.all([place(body, key), place(body, key)]);
    expect(b.body.id).toBe(a.body.id);
    expect(b.body.legs.map((l: Order) => l['id'])).toEqual(a.body.legs.map((l: Order) => l['id']));
    expect((await place({ ...body, stopLoss: { stopPrice: '141.00' } }, key)).body).toMatchObject({ status: 422, field: 'idempotencyKey' });
    await http('DELETE', api('/oms/order'), { token: writer, body: { orderId: a.body.id } });
  });

  it('attack: the shares a partly filled bracket entry bought belong to its exits; no other sell or close takes them (no short sale)', async () => {
    await p.oms.engine.pause();
    try {
      await p.oms.feed.setPrice('AAPL', '49.97'); // ask 50.00
      const entry = await place({
        accountId: aliceCash, // no AAPL before
        symbol: 'AAPL',
        side: 'BUY',
        type: 'LIMIT',
        limitPrice: '50.00',
        timeInForce: 'GTC',
        quantity: '150',
        orderClass: 'BRACKET',
        takeProfit: { limitPrice: '60.00' },
        stopLoss: { stopPrice: '40.00' },
      });
      expect(entry.status).toBe(201);
      await p.oms.engine.runOnce(); // 100 of 150 (liquidity 100): the exits wait for the rest
      expect(await getOrder(aliceCash, entry.body.id)).toMatchObject({ status: 'PARTIALLY_FILLED', filledQuantity: '100' });
      // Before the fix both were accepted: the 100 sold here, then the take-profit sold all 150.
      const sell = { accountId: aliceCash, symbol: 'AAPL', side: 'SELL', type: 'LIMIT', limitPrice: '55.00', timeInForce: 'GTC' };
      expect((await place({ ...sell, quantity: '1' })).body).toMatchObject({ status: 422, field: 'quantity' });
      expect((await http('DELETE', api(`/accounts/${aliceCash}/positions/AAPL`), { token: writer })).body).toMatchObject({
        status: 409,
        field: 'symbol',
      });
      await p.oms.engine.runOnce(); // the rest: the exits start, each selling all 150, once
      expect(await getOrder(aliceCash, entry.body.id)).toMatchObject({ status: 'FILLED', filledQuantity: '150' });
      const exits = await db.query('oms', 'SELECT status, quantity::text FROM orders WHERE parent_order_id = $1 ORDER BY leg', [
        entry.body.id,
      ]);
      expect(exits).toEqual([
        { status: 'NEW', quantity: '150.00000000' },
        { status: 'NEW', quantity: '150.00000000' },
      ]);
      expect((await place({ ...sell, quantity: '1' })).body).toMatchObject({ status: 422, field: 'quantity' });
      await p.oms.feed.setPrice('AAPL', '61.00'); // bid 60.96, above the take-profit's limit
      await p.oms.engine.runOnce(); // the take-profit sells 100, its stop-loss is cancelled
      await p.oms.engine.runOnce(); // and the last 50
      const [{ net }] = await db.query(
        'oms',
        "SELECT sum(CASE WHEN side = 'BUY' THEN quantity ELSE -quantity END)::text AS net FROM trades WHERE account_id = $1 AND symbol = 'AAPL'",
        [aliceCash],
      );
      expect(new Decimal(net).toFixed()).toBe('0');
    } finally {
      await p.oms.feed.setPrice('AAPL', '190.00');
      p.oms.engine.resume();
    }
  });

  /** The AAPL the account holds as the OMS counts it: what it bought less what it sold. */
  const aaplHeld = async (accountId: string): Promise<Decimal> => {
    const [{ net }] = await db.query(
      'oms',
      "SELECT coalesce(sum(CASE WHEN side = 'BUY' THEN quantity ELSE -quantity END), 0)::text AS net FROM trades WHERE account_id = $1 AND symbol = 'AAPL'",
      [accountId],
    );
    return new Decimal(net);
  };
  /** With the engine paused and AAPL at 9.99 (bid 9.98, ask 10.00): buys `quantity` at 10.00, 100 a pass. */
  const buyAaplAt10 = async (quantity: number) => {
    const buy = await place({
      accountId: aliceCash,
      symbol: 'AAPL',
      side: 'BUY',
      type: 'LIMIT',
      limitPrice: '10.00',
      timeInForce: 'GTC',
      quantity: String(quantity),
    });
    expect(buy.status).toBe(201);
    for (let pass = 0; pass < Math.ceil(quantity / 100); pass++) await p.oms.engine.runOnce();
    expect(await getOrder(aliceCash, buy.body.id)).toMatchObject({ status: 'FILLED' });
  };
  /**
   * A market order of the account on the same side, placed before the pair's next pass: it comes
   * first in the account's queue, so of the 100 a pass allows it takes 96 and leaves 4 for the pair.
   */
  const marketFirst = (side: 'BUY' | 'SELL') =>
    place({ accountId: aliceCash, symbol: 'AAPL', side, type: 'MARKET', timeInForce: 'DAY', quantity: '96' });
  /** An OCO selling 10 AAPL: a limit at the bid of 9.99 (marketable at once) and a stop at 9.00. */
  const ocoSell = () =>
    place({
      accountId: aliceCash,
      symbol: 'AAPL',
      side: 'SELL',
      type: 'LIMIT',
      limitPrice: '9.98',
      timeInForce: 'GTC',
      quantity: '10',
      orderClass: 'OCO',
      stopLoss: { stopPrice: '9.00' },
    });
  const orderUpdates = (id: string) =>
    db.query(
      'oms',
      `SELECT payload->'order'->>'status' AS status, payload->'order'->>'quantity' AS quantity FROM outbox
        WHERE type = 'order.updated' AND payload->'order'->>'id' = $1 ORDER BY seq`,
      [id],
    );

  it('OCO: a partial fill of one leg reduces the other to the remainder; the stop then sells only that, 10 in all', async () => {
    await p.oms.engine.pause();
    try {
      await p.oms.feed.setPrice('AAPL', '9.99'); // bid 9.98, ask 10.00
      await buyAaplAt10(106);
      const before = await aaplHeld(aliceCash);
      const first = await marketFirst('SELL');
      const oco = await ocoSell();
      expect(oco.status).toBe(201);
      const stop = leg(oco.body, 'STOP_LOSS');
      await p.oms.engine.runOnce(); // 96 to the market sell, 4 to the limit leg
      expect(await getOrder(aliceCash, first.body.id)).toMatchObject({ status: 'FILLED', filledQuantity: '96' });
      expect(await getOrder(aliceCash, oco.body.id)).toMatchObject({
        status: 'PARTIALLY_FILLED',
        quantity: '10',
        filledQuantity: '4',
        remainingQuantity: '6',
      });
      // The stop leg works on, for what the limit leg has left: the two never sell more than 10 together.
      expect(await getOrder(aliceCash, stop.id)).toMatchObject({
        status: 'NEW',
        quantity: '6',
        filledQuantity: '0',
        remainingQuantity: '6',
        fills: [],
      });
      expect(await orderUpdates(stop.id)).toEqual([
        { status: 'NEW', quantity: '10' },
        { status: 'NEW', quantity: '6' },
      ]);
      await p.oms.feed.setPrice('AAPL', '8.99'); // through the stop; the bid 8.98 is below the limit leg's 9.98
      await p.oms.engine.runOnce();
      expect(await getOrder(aliceCash, stop.id)).toMatchObject({ status: 'FILLED', filledQuantity: '6', averageFillPrice: '8.98' });
      expect(await getOrder(aliceCash, oco.body.id)).toMatchObject({
        status: 'CANCELLED',
        filledQuantity: '4',
        statusReason: `OCO: order ${stop.id} filled`,
      });
      const [{ sold }] = await db.query('oms', 'SELECT sum(quantity)::text AS sold FROM trades WHERE order_id = ANY($1::uuid[])', [
        [oco.body.id, stop.id],
      ]);
      expect(new Decimal(sold).toFixed()).toBe('10');
      const after = await aaplHeld(aliceCash);
      expect(before.minus(after).toFixed()).toBe('106'); // the market sell's 96 and the pair's 10, no more
      await p.oms.engine.runOnce();
      expect((await aaplHeld(aliceCash)).toFixed()).toBe(after.toFixed()); // nothing more sells
    } finally {
      await p.oms.feed.setPrice('AAPL', '190.00');
      p.oms.engine.resume();
    }
  });

  it('a bracket whose exits fill in parts: each partial fill brings the other exit down to the same remainder', async () => {
    await p.oms.engine.pause();
    try {
      await p.oms.feed.setPrice('AAPL', '9.99'); // bid 9.98, ask 10.00
      await buyAaplAt10(96 + 98); // what the two sells below sell
      // A stop older than the bracket's: once the price falls through both, it comes first and takes 98 of a pass's 100.
      const olderStop = await place({
        accountId: aliceCash,
        symbol: 'AAPL',
        side: 'SELL',
        type: 'STOP',
        stopPrice: '9.00',
        timeInForce: 'GTC',
        quantity: '98',
      });
      expect(olderStop.status).toBe(201);
      const entry = await place({
        accountId: aliceCash,
        symbol: 'AAPL',
        side: 'BUY',
        type: 'LIMIT',
        limitPrice: '10.00',
        timeInForce: 'GTC',
        quantity: '10',
        orderClass: 'BRACKET',
        takeProfit: { limitPrice: '9.98' },
        stopLoss: { stopPrice: '9.00' },
      });
      expect(entry.status).toBe(201);
      await p.oms.engine.runOnce(); // the entry fills; its exits start
      const filled = await getOrder(aliceCash, entry.body.id);
      expect(filled).toMatchObject({ status: 'FILLED', filledQuantity: '10' });
      const tp = leg(filled, 'TAKE_PROFIT');
      const sl = leg(filled, 'STOP_LOSS');
      expect([tp.status, sl.status]).toEqual(['NEW', 'NEW']);
      await marketFirst('SELL');
      await p.oms.engine.runOnce(); // 96 to the market sell, 4 to the take-profit
      expect(await getOrder(aliceCash, tp.id)).toMatchObject({ status: 'PARTIALLY_FILLED', filledQuantity: '4', remainingQuantity: '6' });
      expect(await getOrder(aliceCash, sl.id)).toMatchObject({ status: 'NEW', quantity: '6', filledQuantity: '0', remainingQuantity: '6' });
      await p.oms.feed.setPrice('AAPL', '8.99'); // through both stops
      await p.oms.engine.runOnce(); // 98 to the older stop, 2 to the stop-loss
      expect(await getOrder(aliceCash, olderStop.body.id)).toMatchObject({ status: 'FILLED', filledQuantity: '98' });
      expect(await getOrder(aliceCash, sl.id)).toMatchObject({ status: 'PARTIALLY_FILLED', quantity: '6', filledQuantity: '2' });
      // The take-profit keeps its 4 and may sell 4 more: what the stop-loss has left.
      expect(await getOrder(aliceCash, tp.id)).toMatchObject({
        status: 'PARTIALLY_FILLED',
        quantity: '8',
        filledQuantity: '4',
        remainingQuantity: '4',
      });
      await p.oms.engine.runOnce();
      expect(await getOrder(aliceCash, sl.id)).toMatchObject({ status: 'FILLED', filledQuantity: '6' });
      expect(await getOrder(aliceCash, tp.id)).toMatchObject({
        status: 'CANCELLED',
        filledQuantity: '4',
        statusReason: `OCO: order ${sl.id} filled`,
      });
    } finally {
      await p.oms.feed.setPrice('AAPL', '190.00');
      p.oms.engine.resume();
    }
  });

  it('after a partial fill an OCO promises only its remainder, once: the rest of the position is free to sell', async () => {
    await p.oms.engine.pause();
    try {
      await p.oms.feed.setPrice('AAPL', '9.99'); // bid 9.98, ask 10.00
      await buyAaplAt10(111);
      await marketFirst('SELL');
      const oco = await ocoSell();
      await p.oms.engine.runOnce(); // 96 to the market sell, 4 to the limit leg
      expect(await getOrder(aliceCash, oco.body.id)).toMatchObject({ status: 'PARTIALLY_FILLED', remainingQuantity: '6' });
      expect(await getOrder(aliceCash, leg(oco.body, 'STOP_LOSS').id)).toMatchObject({ status: 'NEW', remainingQuantity: '6' });
      const held = await aaplHeld(aliceCash);
      const free = held.minus(6); // the pair's remainder, counted once
      const sell = { accountId: aliceCash, symbol: 'AAPL', side: 'SELL', type: 'LIMIT', limitPrice: '12.00', timeInForce: 'GTC' };
      expect((await place({ ...sell, quantity: free.plus(1).toFixed() })).body).toMatchObject({
        status: 422,
        field: 'quantity',
        detail: expect.stringContaining(`${free.toFixed()} AAPL available`),
      });
      const rest = await place({ ...sell, quantity: free.toFixed() });
      expect(rest.status).toBe(201);
      await http('DELETE', api('/oms/order'), { token: writer, body: { orderId: rest.body.id } });
      const position = await until(
        () => http('GET', api(`/accounts/${aliceCash}/positions`), { token: writer }).then((r) => r.body.positions as Order[]),
        (list) => list.find((h) => h['symbol'] === 'AAPL')?.['quantity'] === held.toFixed(),
        `an AAPL position of ${held.toFixed()}`,
      );
      expect(position.find((h) => h['symbol'] === 'AAPL')).toMatchObject({ quantityAvailable: free.toFixed() });
      await http('DELETE', api('/oms/order'), { token: writer, body: { orderId: oco.body.id } });
    } finally {
      await p.oms.feed.setPrice('AAPL', '190.00');
      p.oms.engine.resume();
    }
  });

  it('a BUY OCO: a partial fill of one leg brings the other down to the remainder, and its hold with it; the pair then buys 10 in all', async () => {
    let pair: string[] = [];
    await p.oms.engine.pause();
    try {
      await p.oms.feed.setPrice('AAPL', '9.99'); // ask 10.00
      const first = await marketFirst('BUY');
      const oco = await place({
        accountId: aliceCash,
        symbol: 'AAPL',
        side: 'BUY',
        type: 'LIMIT',
        limitPrice: '10.00',
        timeInForce: 'GTC',
        quantity: '10',
        orderClass: 'OCO',
        stopLoss: { stopPrice: '11.00' },
      });
      expect(oco.status).toBe(201);
      const stop = leg(oco.body, 'STOP_LOSS');
      pair = [oco.body.id, stop.id];
      // The stop's hold when placed: 10 at its collar, 11.57 (the ask at the stop, 11.01, plus 5 %), and 0.05 % commission.
      expect(stop).toMatchObject({ type: 'STOP', quantity: '10', reservedAmount: '115.76' });
      await settled(db);
      const before = await balance(aliceCash);
      await p.oms.engine.runOnce(); // 96 to the market buy, 4 to the limit leg
      const market = await getOrder(aliceCash, first.body.id);
      expect(market).toMatchObject({ status: 'FILLED', filledQuantity: '96' });
      expect(await getOrder(aliceCash, oco.body.id)).toMatchObject({
        status: 'PARTIALLY_FILLED',
        filledQuantity: '4',
        grossAmount: '40.00',
        commission: '0.02',
        reservedAmount: '100.05',
      });
      // The stop leg works on for the 6 the limit leg has left, holding what 6 can cost as it was reckoned when placed.
      expect(await getOrder(aliceCash, stop.id)).toMatchObject({
        status: 'NEW',
        quantity: '6',
        filledQuantity: '0',
        remainingQuantity: '6',
        reservedAmount: '69.45', // 6 × 11.57 + 0.03
      });
      const reductions = await db.query(
        'oms',
        "SELECT payload->'order' AS \"order\" FROM outbox WHERE type = 'order.reduced' AND payload->'order'->>'id' = $1",
        [stop.id],
      );
      expect(reductions).toEqual([
        {
          order: {
            id: stop.id,
            accountId: aliceCash,
            side: 'BUY',
            currency: 'USD',
            quantity: '6',
            filledQuantity: '0',
            settledAmount: '0',
            holdAmount: '69.45',
          },
        },
      ]);
      // Banking: the stop's hold comes down by 46.31 (4 × 11.57 and 0.03 of commission), freed as available cash.
      await settled(db);
      const [stopHold] = await db.query('banking', 'SELECT amount::text, state FROM holds WHERE order_id = $1', [stop.id]);
      expect({ amount: new Decimal(stopHold.amount).toFixed(2), state: stopHold.state }).toEqual({ amount: '69.45', state: 'HELD' });
      const marketHold = new Decimal(market.reservedAmount);
      const marketCost = new Decimal(market.grossAmount).plus(market.commission);
      const after = await balance(aliceCash);
      expect(after.held).toBe(new Decimal(before.held).minus(marketHold).minus('40.02').minus('46.31').toFixed(2));
      expect(after.availableToTrade).toBe(new Decimal(before.availableToTrade).plus(marketHold.minus(marketCost)).plus('46.31').toFixed(2));
      const [freed] = await db.query(
        'banking',
        `SELECT e.description, p.amount::text FROM journal_entries e JOIN postings p ON p.entry_id = e.id
          WHERE e.hold_order_id = $1 AND e.kind = 'HOLD_RELEASE' AND p.book = 'CUSTOMER_CASH'`,
        [stop.id],
      );
      expect({ description: freed.description, amount: new Decimal(freed.amount).toFixed(2) }).toEqual({
        description: `Hold reduced for order ${stop.id} (quantity now 6)`,
        amount: '46.31',
      });

      // The price goes through the stop: it buys its 6 at the ask, 11.01, within its smaller hold; the limit leg is cancelled.
      await p.oms.feed.setPrice('AAPL', '11.00');
      await p.oms.engine.runOnce();
      expect(await getOrder(aliceCash, stop.id)).toMatchObject({ status: 'FILLED', filledQuantity: '6', averageFillPrice: '11.01' });
      expect(await getOrder(aliceCash, oco.body.id)).toMatchObject({
        status: 'CANCELLED',
        filledQuantity: '4',
        statusReason: `OCO: order ${stop.id} filled`,
      });
      const [{ bought }] = await db.query('oms', 'SELECT sum(quantity)::text AS bought FROM trades WHERE order_id = ANY($1::uuid[])', [
        [oco.body.id, stop.id],
      ]);
      expect(new Decimal(bought).toFixed()).toBe('10');
    } finally {
      await p.oms.feed.setPrice('AAPL', '190.00');
      p.oms.engine.resume();
    }
    await noHoldLeft(aliceCash);
    await settled(db);
    const holds = await db.query('banking', 'SELECT order_id, state FROM holds WHERE order_id = ANY($1::text[]) ORDER BY state', [pair]);
    expect(holds.map((h: Order) => h['state'])).toEqual(['CAPTURED', 'CAPTURED']);
    await expectInvariants(db);
  });

  it('keeps every invariant', async () => {
    await settled(db);
    await expectInvariants(db);
  });
});
