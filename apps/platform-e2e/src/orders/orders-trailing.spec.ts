import { randomUUID } from 'node:crypto';
import { openApiDocument } from '@trading/rest-facade-service';
import { http, openApiResponseValidator } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { startOrdersPlatform, until } from '../support/orders-platform';
import { patSession } from '../support/sessions';
import type { TestPlatform } from '../support/test-platform';

const conforms = openApiResponseValidator(openApiDocument);
const [alice] = DEMO_USERS as [(typeof DEMO_USERS)[0]];
const aliceCash = DEMO_ACCOUNTS[0]!.id; // 10000 USD, no positions
const aliceMargin = DEMO_ACCOUNTS[1]!.id; // AAPL 10, MSFT 5

/** TRAILING_STOP follows the best price (trailPrice or trailPercent away) and triggers as a market order. */
describe('orders: trailing stops', () => {
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
  const getOrder = (accountId: string, id: string) =>
    http('GET', api(`/oms/${accountId}/order/${id}`), { token: writer }).then((r) => r.body);
  const waitFor = (accountId: string, id: string, done: (o: Record<string, unknown>) => boolean, what: string) =>
    until(() => getOrder(accountId, id), done, what);
  const trailing = { symbol: 'AAPL', type: 'TRAILING_STOP', timeInForce: 'GTC', quantity: '4' };

  it('a sell follows a rising price tick by tick, holds its stop when the price dips, and triggers as a market order (at the bid)', async () => {
    await p.oms.feed.setPrice('AAPL', '190.00');
    const res = await place({ ...trailing, accountId: aliceMargin, side: 'SELL', trailPrice: '5.00' });
    expect(res.status).toBe(201);
    conforms('POST', '/oms/order', 201, res.body);
    expect(res.body).toMatchObject({ status: 'NEW', stopPrice: '185.00', highWaterMark: '190.00', trailPrice: '5.00', trailPercent: null });
    const id = res.body.id;
    for (const [price, stop] of [
      ['193.50', '188.50'],
      ['195.00', '190.00'],
      ['200.00', '195.00'],
    ] as const) {
      await p.oms.feed.setPrice('AAPL', price);
      expect(await waitFor(aliceMargin, id, (o) => o['stopPrice'] === stop, `stop ${stop}`)).toMatchObject({
        highWaterMark: price,
        status: 'NEW',
      });
    }
    await p.oms.feed.setPrice('AAPL', '197.00'); // a dip above the stop: the stop stays
    await new Promise((r) => setTimeout(r, 300));
    expect(await getOrder(aliceMargin, id)).toMatchObject({
      status: 'NEW',
      stopPrice: '195.00',
      highWaterMark: '200.00',
      triggeredAt: null,
    });
    await p.oms.feed.setPrice('AAPL', '194.90');
    const filled = await waitFor(aliceMargin, id, (o) => o['status'] === 'FILLED', 'the trailing stop to fill');
    // The last price 194.90 triggers it; the bid is 194.80.
    expect(filled).toMatchObject({ averageFillPrice: '194.80', triggeredAt: expect.any(String), stopPrice: '195.00', filledQuantity: '4' });
  });

  it('a buy with trailPercent follows a falling price; its hold covers the collar of its first stop and comes back', async () => {
    await p.oms.feed.setPrice('MSFT', '400.00');
    const res = await place({ ...trailing, symbol: 'MSFT', quantity: '2', accountId: aliceCash, side: 'BUY', trailPercent: '2' });
    expect(res.body).toMatchObject({ status: 'NEW', stopPrice: '408.00', highWaterMark: '400.00', trailPercent: '2', trailPrice: null });
    expect(res.body.reservedAmount).not.toBeNull();
    await p.oms.feed.setPrice('MSFT', '390.00');
    await waitFor(aliceCash, res.body.id, (o) => o['stopPrice'] === '397.80', 'stop 397.80');
    await p.oms.feed.setPrice('MSFT', '398.00');
    expect(await waitFor(aliceCash, res.body.id, (o) => o['status'] === 'FILLED', 'the buy to fill')).toMatchObject({
      averageFillPrice: '398.20', // the ask at a last price of 398.00
      highWaterMark: '390.00',
    });
    await until(
      () => http('GET', api(`/banking/${aliceCash}/balance/USD`), { token: writer }).then((r) => r.body),
      (b) => b.held === '0.00',
      'the hold given back',
    );
  });

  it('refuses with a problem naming the field', async () => {
    await p.oms.feed.setPrice('AAPL', '190.00');
    const base = { ...trailing, accountId: aliceMargin, side: 'SELL' };
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ ...base, trailPrice: '5.00', trailPercent: '2' }, 400, 'trailPercent'],
      [base, 400, 'trailPrice'],
      [{ ...base, trailPrice: '5.00', stopPrice: '180.00' }, 400, 'stopPrice'],
      [{ ...base, trailPercent: '100' }, 400, 'trailPercent'],
      [{ ...base, trailPrice: '5.005' }, 422, 'trailPrice'],
      [{ ...base, trailPrice: '500.00' }, 422, 'trailPrice'],
      [{ ...base, trailPrice: '5.00', timeInForce: 'IOC' }, 422, 'timeInForce'],
      [{ ...base, type: 'LIMIT', limitPrice: '200.00', trailPrice: '5.00' }, 400, 'trailPrice'],
    ];
    for (const [body, status, field] of cases)
      expect({ body, answer: (await place(body)).body }).toMatchObject({ answer: { status, field } });
  });

  it('rules and what-if know TRAILING_STOP; a retry with the Idempotency-Key answers the same order', async () => {
    const rules = (await http('GET', api(`/oms/${aliceMargin}/order/rules?symbol=AAPL`), { token: writer })).body;
    expect(rules.orderTypes).toContain('TRAILING_STOP');
    expect(rules.timeInForceByType).toContainEqual({ type: 'TRAILING_STOP', timesInForce: ['DAY', 'GTC'] });
    const body = { ...trailing, accountId: aliceMargin, side: 'SELL', trailPercent: '1', quantity: '1' };
    const whatIf = await http('POST', api('/oms/what-if'), { token: writer, body });
    // The stop starts at 188.10 (1 % below 190.00); a sell there fills at the bid, 188.00.
    expect(whatIf.body).toMatchObject({ type: 'TRAILING_STOP', estimatedPrice: '188.00', wouldBeRejected: false });
    const key = { 'Idempotency-Key': `trail-${randomUUID()}` };
    const [a, b] = await Promise.all([place(body, key), place(body, key)]);
    expect(b.body.id).toBe(a.body.id);
    expect((await place({ ...body, trailPercent: '3' }, key)).body).toMatchObject({ status: 422, field: 'idempotencyKey' });
    await http('DELETE', api('/oms/order'), { token: writer, body: { orderId: a.body.id } });
  });
});
