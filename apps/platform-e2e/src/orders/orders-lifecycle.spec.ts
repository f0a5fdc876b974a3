import Decimal from 'decimal.js';
import { openApiDocument } from '@trading/rest-facade-service';
import { http, openApiResponseValidator } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { startOrdersPlatform, until } from '../support/orders-platform';
import { patSession } from '../support/sessions';
import type { TestPlatform } from '../support/test-platform';

const conforms = openApiResponseValidator(openApiDocument);
const [alice] = DEMO_USERS as [(typeof DEMO_USERS)[0]];
const aliceCash = DEMO_ACCOUNTS[0]!.id; // 10000 USD, no positions

/** Each order type's lifecycle, partial fills, IOC/FOK/DAY rules and the cancel race, over REST. */
describe('order lifecycle', () => {
  let p: TestPlatform;
  let writer: string;
  beforeAll(async () => {
    p = await startOrdersPlatform({ OMS_FILL_LIQUIDITY: '100' });
    writer = await patSession(p, alice.email, 'READ_WRITE');
  }, 60_000);
  afterAll(() => p?.stop());

  const api = (path: string) => p.urls.api + path;
  const place = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    http('POST', api('/oms/order'), { token: writer, body, headers });
  const getOrder = (accountId: string, id: string) => http('GET', api(`/oms/${accountId}/order/${id}`), { token: writer });
  const settled = (accountId: string, id: string, status: string) =>
    until(
      () => getOrder(accountId, id),
      (r) => r.body.status === status,
      `order ${id} ${status}`,
    ).then((r) => r.body);
  const balance = async (accountId: string) => (await http('GET', api(`/banking/${accountId}/balance/USD`), { token: writer })).body;
  const position = async (accountId: string, symbol: string) =>
    (await http('GET', api(`/accounts/${accountId}/position?symbol=${symbol}`), { token: writer })).body;

  it('a market buy fills at once at the ask; banking takes gross + commission out of the hold, accounts books the position', async () => {
    await p.oms.feed.setPrice('AAPL', '189.90'); // bid 189.80, ask 190.00
    const before = await balance(aliceCash);
    const res = await place({
      accountId: aliceCash,
      symbol: 'AAPL',
      side: 'BUY',
      type: 'MARKET',
      timeInForce: 'DAY',
      quantity: '10',
      clientOrderId: 'lifecycle-mkt-1',
    });
    expect(res.status).toBe(201);
    conforms('POST', '/oms/order', 201, res.body);
    expect(res.body).toMatchObject({ status: 'NEW', clientOrderId: 'lifecycle-mkt-1', reservedAmount: '1996.00', filledQuantity: '0' });
    const order = await settled(aliceCash, res.body.id, 'FILLED');
    conforms('GET', '/oms/{accountId}/order/{orderId}', 200, order);
    expect(order).toMatchObject({ filledQuantity: '10', averageFillPrice: '190.00', grossAmount: '1900.00', commission: '0.95' });
    expect(order.fills).toHaveLength(1);
    expect(order.fills[0]).toMatchObject({
      quantity: '10',
      price: '190.00',
      grossAmount: '1900.00',
      commission: '0.95',
      netAmount: '-1900.95',
    });
    for (const t of ['createdAt', 'submittedAt', 'filledAt']) expect(order[t]).toEqual(expect.any(String));
    // On the settlement stream: its start, then the fill's trade, state and close, in that order (the three in one statement).
    const events: Array<{ type: string; status: string | null }> = await p.oms.dataSource.query(
      `SELECT type, payload->'order'->>'status' AS status FROM outbox
        WHERE payload->'order'->>'id' = $1 OR payload->'trade'->>'orderId' = $1 ORDER BY seq`,
      [res.body.id],
    );
    expect(events).toEqual([
      { type: 'order.updated', status: 'NEW' },
      { type: 'trade.executed', status: null },
      { type: 'order.updated', status: 'FILLED' },
      { type: 'order.closed', status: 'FILLED' },
    ]);
    const after = await until(
      () => balance(aliceCash),
      (b) => b.held === '0.00' && b.cash !== before.cash,
      'settlement in banking',
    );
    expect(new Decimal(before.cash).minus(after.cash).toFixed(2)).toBe('1900.95');
    const pos = await until(
      () => position(aliceCash, 'AAPL'),
      (b) => b.quantity === '10',
      'settlement in accounts',
    );
    expect(pos).toMatchObject({ quantity: '10', averageCost: '190.095' });
  });

  const cancel = (orderId: string, how: 'body' | 'query' = 'body') =>
    how === 'body'
      ? http('DELETE', api('/oms/order'), { token: writer, body: { orderId } })
      : http('DELETE', api(`/oms/order?orderId=${orderId}`), { token: writer });
  const noHoldLeft = () =>
    until(
      () => balance(aliceCash),
      (b) => b.held === '0.00',
      'every hold given back',
    );
  const pause = () => p.oms.engine.pause();
  afterEach(() => p.oms.engine.resume());

  it('a limit buy rests until the ask comes down to it, then fills at the ask; the unused hold comes back', async () => {
    await p.oms.feed.setPrice('AAPL', '190.00');
    const res = await place({
      accountId: aliceCash,
      symbol: 'AAPL',
      side: 'BUY',
      type: 'LIMIT',
      timeInForce: 'GTC',
      quantity: '5',
      limitPrice: '185.00',
    });
    expect(res).toMatchObject({ status: 201, body: { status: 'NEW', limitPrice: '185.00', reservedAmount: '925.46' } });
    await new Promise((r) => setTimeout(r, 300));
    expect((await getOrder(aliceCash, res.body.id)).body).toMatchObject({ status: 'NEW', fills: [] });
    await p.oms.feed.setPrice('AAPL', '184.40'); // ask 184.50
    expect(await settled(aliceCash, res.body.id, 'FILLED')).toMatchObject({
      averageFillPrice: '184.50',
      grossAmount: '922.50',
      commission: '0.46',
    });
    await noHoldLeft();
    await until(
      () => position(aliceCash, 'AAPL'),
      (b) => b.quantity === '15',
      'position 15',
    );
  });

  it('a stop sell triggers when the price falls to the stop, fills at the bid and books realised P&L', async () => {
    const res = await place({
      accountId: aliceCash,
      symbol: 'AAPL',
      side: 'SELL',
      type: 'STOP',
      timeInForce: 'DAY',
      quantity: '5',
      stopPrice: '180.00',
    });
    expect(res).toMatchObject({ status: 201, body: { status: 'NEW', reservedAmount: null, expiresAt: expect.any(String) } });
    await new Promise((r) => setTimeout(r, 300));
    expect((await getOrder(aliceCash, res.body.id)).body).toMatchObject({ status: 'NEW', triggeredAt: null });
    await p.oms.feed.setPrice('AAPL', '179.99'); // bid 179.90
    const order = await settled(aliceCash, res.body.id, 'FILLED');
    expect(order).toMatchObject({ averageFillPrice: '179.90', triggeredAt: expect.any(String), grossAmount: '899.50', commission: '0.45' });
    const pos = await until(
      () => position(aliceCash, 'AAPL'),
      (b) => b.quantity === '10',
      'position 10',
    );
    expect(new Decimal(pos.realizedPnl).lt(0)).toBe(true); // bought ≈ 188, sold 179.90
  });

  it('a stop-limit buy triggers at the stop and then waits for its limit', async () => {
    const res = await place({
      accountId: aliceCash,
      symbol: 'AAPL',
      side: 'BUY',
      type: 'STOP_LIMIT',
      timeInForce: 'GTC',
      quantity: '2',
      stopPrice: '200.00',
      limitPrice: '201.00',
    });
    expect(res.status).toBe(201);
    await p.oms.feed.setPrice('AAPL', '202.00');
    const triggered = await until(
      () => getOrder(aliceCash, res.body.id),
      (r) => r.body.triggeredAt !== null,
      'the stop to trigger',
    );
    expect(triggered.body).toMatchObject({ status: 'NEW', fills: [] }); // the ask 202.11 is above the 201 limit
    await p.oms.feed.setPrice('AAPL', '200.39'); // ask 200.50
    expect(await settled(aliceCash, res.body.id, 'FILLED')).toMatchObject({ averageFillPrice: '200.50', filledQuantity: '2' });
    await noHoldLeft();
  });

  it('fills a big order in parts; cancelling the rest releases what the fills did not use; cancelling again is harmless', async () => {
    await pause();
    await p.oms.feed.setPrice('AAPL', '9.99'); // ask 10.00
    const before = await balance(aliceCash);
    const res = await place({
      accountId: aliceCash,
      symbol: 'AAPL',
      side: 'BUY',
      type: 'LIMIT',
      timeInForce: 'DAY',
      quantity: '250',
      limitPrice: '10.00',
    });
    await p.oms.engine.runOnce(); // 100 per pass
    const partial = (await getOrder(aliceCash, res.body.id)).body;
    expect(partial).toMatchObject({
      status: 'PARTIALLY_FILLED',
      filledQuantity: '100',
      remainingQuantity: '150',
      grossAmount: '1000.00',
      commission: '0.50',
    });
    const first = await cancel(res.body.id, 'body');
    expect(first).toMatchObject({
      status: 200,
      body: { status: 'CANCELLED', filledQuantity: '100', cancelledAt: expect.any(String), statusReason: 'Cancelled by the client' },
    });
    conforms('DELETE', '/oms/order', 200, first.body);
    expect(await cancel(res.body.id, 'query')).toMatchObject({
      status: 200,
      body: { status: 'CANCELLED', cancelledAt: first.body.cancelledAt },
    });
    await p.oms.engine.runOnce();
    expect((await getOrder(aliceCash, res.body.id)).body.fills).toHaveLength(1);
    const after = await noHoldLeft();
    expect(new Decimal(before.cash).minus(after.cash).toFixed(2)).toBe('1000.50');
  });

  it('IOC fills what it can in its first pass and cancels the rest; FOK fills entirely or not at all', async () => {
    await pause();
    const ioc = await place({
      accountId: aliceCash,
      symbol: 'AAPL',
      side: 'BUY',
      type: 'LIMIT',
      timeInForce: 'IOC',
      quantity: '150',
      limitPrice: '10.00',
    });
    const fok = await place({ accountId: aliceCash, symbol: 'AAPL', side: 'BUY', type: 'MARKET', timeInForce: 'FOK', quantity: '150' });
    await p.oms.engine.runOnce();
    expect((await getOrder(aliceCash, ioc.body.id)).body).toMatchObject({
      status: 'CANCELLED',
      filledQuantity: '100',
      statusReason: 'IOC: unfilled remainder cancelled',
    });
    expect((await getOrder(aliceCash, fok.body.id)).body).toMatchObject({
      status: 'CANCELLED',
      filledQuantity: '0',
      fills: [],
      statusReason: expect.stringContaining('FOK'),
    });
    await noHoldLeft();
  });

  it('a DAY order expires at the end of its session and gives its hold back', async () => {
    const res = await place({
      accountId: aliceCash,
      symbol: 'AAPL',
      side: 'BUY',
      type: 'LIMIT',
      timeInForce: 'DAY',
      quantity: '1',
      limitPrice: '5.00',
    });
    expect(new Date(res.body.expiresAt).getTime()).toBeGreaterThan(Date.now());
    await p.oms.dataSource.query('UPDATE orders SET expires_at = now() WHERE id = $1', [res.body.id]); // the session ends
    expect(await settled(aliceCash, res.body.id, 'EXPIRED')).toMatchObject({ expiredAt: expect.any(String), fills: [] });
    expect((await cancel(res.body.id)).status).toBe(409);
    await noHoldLeft();
  });

  it('refuses to cancel a filled order (409) and rejects what buying power or the position cannot cover (422, kept as REJECTED)', async () => {
    const filled = await place({ accountId: aliceCash, symbol: 'AAPL', side: 'BUY', type: 'MARKET', timeInForce: 'DAY', quantity: '1' });
    await settled(aliceCash, filled.body.id, 'FILLED');
    expect(await cancel(filled.body.id)).toMatchObject({ status: 409, body: { code: 'CONFLICT', field: 'orderId' } });

    const tooBig = await place({
      accountId: aliceCash,
      symbol: 'AAPL',
      side: 'BUY',
      type: 'LIMIT',
      timeInForce: 'DAY',
      quantity: '90000',
      limitPrice: '10.00',
      clientOrderId: 'too-big',
    });
    expect(tooBig).toMatchObject({
      status: 422,
      body: { code: 'UNPROCESSABLE', field: 'quantity', detail: expect.stringMatching(/Insufficient buying power/) },
    });
    const rejected = (await http('GET', api(`/oms/${aliceCash}/orders?status=REJECTED`), { token: writer })).body.orders;
    expect(rejected).toEqual([expect.objectContaining({ clientOrderId: 'too-big', status: 'REJECTED', rejectedAt: expect.any(String) })]);

    const oversell = await place({ accountId: aliceCash, symbol: 'MSFT', side: 'SELL', type: 'MARKET', timeInForce: 'DAY', quantity: '1' });
    expect(oversell).toMatchObject({ status: 422, body: { field: 'quantity', detail: expect.stringMatching(/Insufficient position/) } });
  });

  it('two sells racing for the whole holding: exactly one is accepted', async () => {
    await pause();
    const held = (
      await until(
        () => position(aliceCash, 'AAPL'),
        (b) => new Decimal(b.quantity ?? 0).gt(0),
        'a holding',
      )
    ).quantity as string;
    const sell = () =>
      place({
        accountId: aliceCash,
        symbol: 'AAPL',
        side: 'SELL',
        type: 'LIMIT',
        timeInForce: 'GTC',
        quantity: held,
        limitPrice: '999.00',
      });
    const results = await Promise.all([sell(), sell(), sell()]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 422, 422]);
    for (const r of results.filter((x) => x.status === 201)) expect((await cancel(r.body.id)).status).toBe(200);
  });

  it('cancel while filling: exactly one outcome each time, and no hold is left behind', async () => {
    await pause();
    await p.oms.feed.setPrice('AAPL', '9.99'); // ask 10.00
    for (let i = 0; i < 6; i++) {
      const res = await place({
        accountId: aliceCash,
        symbol: 'AAPL',
        side: 'BUY',
        type: 'LIMIT',
        timeInForce: 'GTC',
        quantity: '5',
        limitPrice: '10.00',
      });
      const [, cancelled] = await Promise.all([p.oms.engine.runOnce(), cancel(res.body.id)]);
      const order = (await getOrder(aliceCash, res.body.id)).body;
      if (cancelled.status === 200) expect(order).toMatchObject({ status: 'CANCELLED', filledQuantity: '0', fills: [] });
      else expect([cancelled.status, order.status, order.fills.length]).toEqual([409, 'FILLED', 1]);
    }
    await noHoldLeft();
  });
});
