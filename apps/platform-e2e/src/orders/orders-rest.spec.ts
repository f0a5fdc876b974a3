import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { openApiDocument } from '@trading/rest-facade-service';
import { http, openApiResponseValidator } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { startOrdersPlatform, until } from '../support/orders-platform';
import { patSession, scopedSession } from '../support/sessions';
import type { TestPlatform } from '../support/test-platform';

const conforms = openApiResponseValidator(openApiDocument);
const [alice] = DEMO_USERS as [(typeof DEMO_USERS)[0]];
const aliceCash = DEMO_ACCOUNTS[0]!.id;
const aliceMargin = DEMO_ACCOUNTS[1]!.id; // holds 10 AAPL
const bobCash = DEMO_ACCOUNTS[2]!.id;

/** The orders API from outside over HTTP: every orders endpoint's happy path, no token, wrong scope, another user's account, bad input. */
describe('orders REST endpoints', () => {
  let p: TestPlatform;
  let writer: string;
  let reader: string;
  let accountsOnly: string;
  let ordersReader: string;
  let filledOrderId: string;
  const api = (path: string) => p.urls.api + path;
  const order = (extra: Record<string, unknown> = {}) => ({
    accountId: aliceCash,
    symbol: 'AAPL',
    side: 'BUY',
    type: 'LIMIT',
    timeInForce: 'GTC',
    quantity: '1',
    limitPrice: '100.00',
    ...extra,
  });

  beforeAll(async () => {
    p = await startOrdersPlatform();
    writer = await patSession(p, alice.email, 'READ_WRITE');
    reader = await patSession(p, alice.email, 'READ_ONLY');
    accountsOnly = await scopedSession(p, alice.email, ['read:accounts']);
    ordersReader = await scopedSession(p, alice.email, ['read:orders']);
    const res = await http('POST', api('/oms/order'), {
      token: writer,
      body: order({ type: 'MARKET', timeInForce: 'DAY', limitPrice: undefined, clientOrderId: 'rest-filled' }),
    });
    filledOrderId = res.body.id;
    await until(
      () => http('GET', api(`/oms/${aliceCash}/order/${filledOrderId}`), { token: reader }),
      (r) => r.body.status === 'FILLED',
      'the first order to fill',
    );
  }, 60_000);
  afterAll(() => p?.stop());

  const reads = [
    { template: '/oms/{accountId}/order/rules', path: (id: string) => `/oms/${id}/order/rules` },
    { template: '/oms/{accountId}/orders', path: (id: string) => `/oms/${id}/orders` },
    { template: '/oms/{accountId}/order/{orderId}', path: (id: string) => `/oms/${id}/order/${filledOrderId}` },
    { template: '/oms/{accountId}/trades', path: (id: string) => `/oms/${id}/trades` },
  ];

  describe.each(reads)('GET $template', ({ template, path }) => {
    it('answers the owner per the OpenAPI document and refuses others', async () => {
      const ok = await http('GET', api(path(aliceCash)), { token: reader });
      expect(ok.status).toBe(200);
      conforms('GET', template, 200, ok.body);
      expect(await http('GET', api(path(aliceCash)))).toMatchObject({ status: 401 });
      expect(await http('GET', api(path(aliceCash)), { token: accountsOnly })).toMatchObject({
        status: 403,
        body: { code: 'INSUFFICIENT_SCOPE' },
      });
      expect(await http('GET', api(path(bobCash)), { token: reader })).toMatchObject({ status: 404, body: { field: 'accountId' } });
      expect(await http('GET', api(path('123')), { token: reader })).toMatchObject({ status: 400, body: { field: 'accountId' } });
    });
  });

  it('reads rules, orders with fills, one order and trades, with filters and pages', async () => {
    const rules = (await http('GET', api(`/oms/${aliceCash}/order/rules?symbol=VOD`), { token: reader })).body;
    expect(rules).toMatchObject({
      orderTypes: ['MARKET', 'LIMIT', 'STOP', 'STOP_LIMIT', 'TRAILING_STOP'],
      timesInForce: ['DAY', 'GTC', 'IOC', 'FOK'],
      shortSellingAllowed: false,
      marketOpen: true,
    });
    expect(rules.instruments).toEqual([
      expect.objectContaining({ symbol: 'VOD', tickSize: '0.0002', lotSize: '1', fractional: false, currency: 'GBP' }),
    ]);
    expect(rules.timeInForceByType).toContainEqual({ type: 'MARKET', timesInForce: ['DAY', 'IOC', 'FOK'] });
    expect(await http('GET', api(`/oms/${aliceCash}/order/rules?symbol=NOPE`), { token: reader })).toMatchObject({
      status: 404,
      body: { field: 'symbol' },
    });
    expect(await http('GET', api(`/oms/${aliceCash}/order/rules?symbol=bad!`), { token: reader })).toMatchObject({
      status: 400,
      body: { field: 'symbol' },
    });

    for (let i = 0; i < 2; i++) expect((await http('POST', api('/oms/order'), { token: writer, body: order() })).status).toBe(201);
    const page1 = (await http('GET', api(`/oms/${aliceCash}/orders?limit=2`), { token: reader })).body;
    expect(page1.orders).toHaveLength(2);
    const page2 = (await http('GET', api(`/oms/${aliceCash}/orders?limit=2&cursor=${page1.nextCursor}`), { token: reader })).body;
    expect(page2).toMatchObject({ orders: [expect.objectContaining({ id: filledOrderId, status: 'FILLED' })], nextCursor: null });
    expect(page2.orders[0].fills).toHaveLength(1);
    expect((await http('GET', api(`/oms/${aliceCash}/orders?status=NEW`), { token: reader })).body.orders).toHaveLength(2);
    expect((await http('GET', api(`/oms/${aliceCash}/orders?from=2000-01-01&to=2000-01-02`), { token: reader })).body.orders).toEqual([]);
    expect(await http('GET', api(`/oms/${aliceCash}/orders?status=DONE`), { token: reader })).toMatchObject({
      status: 400,
      body: { field: 'status' },
    });
    expect(await http('GET', api(`/oms/${aliceCash}/orders?cursor=abc.def`), { token: reader })).toMatchObject({
      status: 400,
      body: { field: 'cursor' },
    });

    const trades = (await http('GET', api(`/oms/${aliceCash}/trades?symbol=AAPL`), { token: reader })).body;
    expect(trades).toMatchObject({
      accountId: aliceCash,
      nextCursor: null,
      trades: [expect.objectContaining({ orderId: filledOrderId, side: 'BUY', quantity: '1' })],
    });
    expect((await http('GET', api(`/oms/${aliceCash}/trades?symbol=MSFT`), { token: reader })).body.trades).toEqual([]);
    expect(await http('GET', api(`/oms/${aliceCash}/trades?from=yesterday`), { token: reader })).toMatchObject({
      status: 400,
      body: { field: 'from' },
    });

    expect(await http('GET', api(`/oms/${aliceMargin}/order/${filledOrderId}`), { token: reader })).toMatchObject({
      status: 404,
      body: { field: 'orderId' },
    });
    expect(await http('GET', api(`/oms/${aliceCash}/order/${randomUUID()}`), { token: reader })).toMatchObject({
      status: 404,
      body: { field: 'orderId' },
    });
    expect(await http('GET', api(`/oms/${aliceCash}/order/nope`), { token: reader })).toMatchObject({
      status: 400,
      body: { field: 'orderId' },
    });
  });

  it('what-if previews cost and the change to cash and buying power, changes nothing, and is a read shaped as a POST', async () => {
    const before = (await http('GET', api(`/banking/${aliceCash}/balance/USD`), { token: reader })).body;
    const res = await http('POST', api('/oms/what-if'), { token: ordersReader, body: order({ quantity: '10', limitPrice: '150.00' }) });
    expect(res.status).toBe(200);
    conforms('POST', '/oms/what-if', 200, res.body);
    expect(res.body).toMatchObject({
      estimatedGrossAmount: '1500.00',
      estimatedCommission: '0.75',
      estimatedTotal: '1500.75',
      reservedAmount: '1500.75',
      wouldBeRejected: false,
      position: null,
      // A cash account borrows nothing: the whole value is required, initially and to maintain.
      margin: { initialRequirementChange: '1500.00', maintenanceRequirementChange: '1500.00' },
    });
    expect(res.body.buyingPower).toEqual({
      before: before.availableToTrade,
      change: '-1500.75',
      after: (Number(before.availableToTrade) - 1500.75).toFixed(2),
    });
    expect((await http('GET', api(`/banking/${aliceCash}/balance/USD`), { token: reader })).body).toEqual(before);

    const tooBig = await http('POST', api('/oms/what-if'), { token: writer, body: order({ quantity: '90000' }) });
    expect(tooBig.body).toMatchObject({ wouldBeRejected: true, rejectReasons: [expect.objectContaining({ field: 'quantity' })] });
    const sell = await http('POST', api('/oms/what-if'), {
      token: writer,
      body: order({ accountId: aliceMargin, side: 'SELL', quantity: '4' }),
    });
    expect(sell.body).toMatchObject({ position: { before: '10', change: '-4', after: '6' }, wouldBeRejected: false });
    // A margin account's long rates: half the value initially, a quarter to maintain; a sell of a holding lowers both.
    const gross = new Decimal(sell.body.estimatedGrossAmount);
    expect(sell.body.margin).toEqual({
      initialRequirementChange: gross.times('-0.5').toFixed(2),
      maintenanceRequirementChange: gross.times('-0.25').toFixed(2),
    });
    const offTick = await http('POST', api('/oms/what-if'), { token: writer, body: order({ limitPrice: '100.001' }) });
    expect(offTick.body.rejectReasons).toEqual([expect.objectContaining({ field: 'limitPrice' })]);

    expect(await http('POST', api('/oms/what-if'), { token: reader, body: order() })).toMatchObject({
      status: 403,
      body: { code: 'READ_ONLY_TOKEN' },
    });
    expect(await http('POST', api('/oms/what-if'), { token: accountsOnly, body: order() })).toMatchObject({
      status: 403,
      body: { code: 'INSUFFICIENT_SCOPE' },
    });
    expect((await http('POST', api('/oms/what-if'), { body: order() })).status).toBe(401);
    expect(await http('POST', api('/oms/what-if'), { token: writer, body: order({ accountId: bobCash }) })).toMatchObject({
      status: 404,
      body: { field: 'accountId' },
    });
    expect(await http('POST', api('/oms/what-if'), { token: writer, body: order({ symbol: 'NOPE' }) })).toMatchObject({
      status: 422,
      body: { field: 'symbol' },
    });
  });

  it("places orders: 201 per the OpenAPI document, no token, wrong scope, READ_ONLY, another user's account", async () => {
    const res = await http('POST', api('/oms/order'), { token: writer, body: order({ clientOrderId: 'rest-place-1' }) });
    expect(res.status).toBe(201);
    conforms('POST', '/oms/order', 201, res.body);
    expect(res.body).toMatchObject({ clientOrderId: 'rest-place-1', status: 'NEW', reservedAmount: '100.05', fills: [] });
    expect((await http('POST', api('/oms/order'), { body: order() })).status).toBe(401);
    expect(await http('POST', api('/oms/order'), { token: ordersReader, body: order() })).toMatchObject({
      status: 403,
      body: { code: 'INSUFFICIENT_SCOPE' },
    });
    expect(await http('POST', api('/oms/order'), { token: reader, body: order() })).toMatchObject({
      status: 403,
      body: { code: 'READ_ONLY_TOKEN' },
    });
    expect(await http('POST', api('/oms/order'), { token: writer, body: order({ accountId: bobCash }) })).toMatchObject({
      status: 404,
      body: { field: 'accountId' },
    });
    expect(await http('POST', api('/oms/order'), { token: writer, body: order({ accountId: randomUUID() }) })).toMatchObject({
      status: 404,
      body: { field: 'accountId' },
    });
    expect(await http('POST', api('/oms/order'), { token: writer, body: order({ clientOrderId: 'rest-place-1' }) })).toMatchObject({
      status: 409,
      body: { field: 'clientOrderId' },
    });
  });

  it('refuses bad orders with 400/422 naming the field, never a 500', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ symbol: 'NOPE' }, 422, 'symbol'],
      [{ symbol: 'aapl' }, 400, 'symbol'],
      [{ limitPrice: '100.005' }, 422, 'limitPrice'],
      [{ quantity: '0' }, 400, 'quantity'],
      [{ quantity: '1.5' }, 422, 'quantity'],
      [{ quantity: '-1' }, 400, 'quantity'],
      [{ quantity: 1 }, 400, 'quantity'],
      [{ quantity: '100001' }, 422, 'quantity'],
      // Not a decimal in the API's syntax (the GraphQL Decimal scalar's): refused at the facade, naming the field.
      [{ quantity: '1e3' }, 400, 'quantity'],
      [{ limitPrice: '1,5' }, 400, 'limitPrice'],
      [{ type: 'STOP', timeInForce: 'DAY', limitPrice: undefined, stopPrice: '+200' }, 400, 'stopPrice'],
      [{ type: 'MARKET', timeInForce: 'GTC', limitPrice: undefined }, 422, 'timeInForce'],
      [{ type: 'STOP', timeInForce: 'IOC', limitPrice: undefined, stopPrice: '200.00' }, 422, 'timeInForce'],
      [{ type: 'LIMIT', limitPrice: undefined }, 400, 'limitPrice'],
      [{ type: 'MARKET', timeInForce: 'DAY' }, 400, 'limitPrice'],
      [{ type: 'STOP_LIMIT', stopPrice: undefined }, 400, 'stopPrice'],
      [{ side: 'HOLD' }, 400, 'side'],
      [{ type: 'TRAILING' }, 400, 'type'],
      [{ accountId: 'nope' }, 400, 'accountId'],
      [{ accountId: undefined }, 400, 'accountId'],
      [{ clientOrderId: 'has spaces' }, 400, 'clientOrderId'],
    ];
    for (const [change, status, field] of cases) {
      const res = await http('POST', api('/oms/order'), { token: writer, body: order(change) });
      expect({ change, status: res.status, field: res.body.field }).toEqual({ change, status, field });
    }
    expect(
      await http('POST', api('/oms/order'), { token: writer, body: 'not json', headers: { 'content-type': 'text/plain' } }),
    ).toMatchObject({ status: 415 });
  });

  it('honours Idempotency-Key: a retry returns the same order, another body with the key is refused', async () => {
    const key = { 'Idempotency-Key': `place-${randomUUID()}` };
    const [a, b] = await Promise.all([
      http('POST', api('/oms/order'), { token: writer, body: order({ limitPrice: '90.00' }), headers: key }),
      http('POST', api('/oms/order'), { token: writer, body: order({ limitPrice: '90.00' }), headers: key }),
    ]);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.body.id).toBe(a.body.id);
    expect(await http('POST', api('/oms/order'), { token: writer, body: order({ limitPrice: '91.00' }), headers: key })).toMatchObject({
      status: 422,
      body: { field: 'idempotencyKey' },
    });
    const same = (await http('GET', api(`/oms/${aliceCash}/orders?status=NEW&limit=100`), { token: reader })).body.orders.filter(
      (o: { limitPrice: string }) => o.limitPrice === '90.00',
    );
    expect(same).toHaveLength(1);
  });

  it("cancels by body or query; no token, wrong scope, another user's order, bad ids", async () => {
    const placed = (await http('POST', api('/oms/order'), { token: writer, body: order() })).body;
    expect((await http('DELETE', api('/oms/order'), { body: { orderId: placed.id } })).status).toBe(401);
    expect(await http('DELETE', api('/oms/order'), { token: ordersReader, body: { orderId: placed.id } })).toMatchObject({
      status: 403,
      body: { code: 'INSUFFICIENT_SCOPE' },
    });
    expect(await http('DELETE', api('/oms/order'), { token: reader, body: { orderId: placed.id } })).toMatchObject({
      status: 403,
      body: { code: 'READ_ONLY_TOKEN' },
    });
    const bob = await patSession(p, DEMO_USERS[1]!.email, 'READ_WRITE');
    expect(await http('DELETE', api(`/oms/order?orderId=${placed.id}`), { token: bob })).toMatchObject({
      status: 404,
      body: { field: 'orderId' },
    });
    expect(await http('DELETE', api('/oms/order?orderId=nope'), { token: writer })).toMatchObject({
      status: 400,
      body: { field: 'orderId' },
    });
    expect(await http('DELETE', api('/oms/order'), { token: writer, body: {} })).toMatchObject({ status: 400, body: { field: 'orderId' } });
    expect(await http('DELETE', api(`/oms/order?orderId=${randomUUID()}`), { token: writer })).toMatchObject({
      status: 404,
      body: { field: 'orderId' },
    });
    const cancelled = await http('DELETE', api(`/oms/order?orderId=${placed.id}`), { token: writer });
    expect(cancelled).toMatchObject({ status: 200, body: { status: 'CANCELLED' } });
    conforms('DELETE', '/oms/order', 200, cancelled.body);
    const conflict = await http('DELETE', api('/oms/order'), { token: writer, body: { orderId: filledOrderId } });
    expect(conflict).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
    conforms('DELETE', '/oms/order', 409, conflict.body);
  });

  it('enforces the scopes in the subgraph for direct GraphQL callers too', async () => {
    const gql = (token: string, query: string, variables: Record<string, unknown> = {}) =>
      http('POST', p.urls.gateway, { token, body: { query, variables } });
    const read = `{ account(id: "${aliceCash}") { orders(limit: 1) { nodes { id } } } }`;
    const denied = await gql(accountsOnly, read);
    expect(denied.body.errors[0].extensions.code).toBe('INSUFFICIENT_SCOPE');
    const place = 'mutation($i: OrderInput!) { placeOrder(input: $i) { id } }';
    expect((await gql(reader, place, { i: order() })).body.errors[0].extensions.code).toBe('READ_ONLY_TOKEN');
    expect((await gql(ordersReader, place, { i: order() })).body.errors[0].extensions.code).toBe('INSUFFICIENT_SCOPE');
    expect((await gql(writer, place, { i: order() })).body.data.placeOrder.id).toEqual(expect.any(String));
  });
});
