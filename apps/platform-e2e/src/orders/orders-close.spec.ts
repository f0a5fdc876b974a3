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

/**
 * Closing a position places the MARKET DAY sell that closes it. A sell already
 * working keeps its part: only what it does not sell is closed. Closing every position cancels
 * the working orders first. Each close is idempotent with Idempotency-Key.
 */
describe('orders: closing positions', () => {
  let p: TestPlatform;
  let writer: string;
  beforeAll(async () => {
    p = await startOrdersPlatform({ OMS_FILL_LIQUIDITY: '100' });
    writer = await patSession(p, alice.email, 'READ_WRITE');
    await p.oms.feed.setPrice('AAPL', '190.00');
    await p.oms.feed.setPrice('MSFT', '400.00');
  }, 60_000);
  afterAll(() => p?.stop());

  const api = (path: string) => p.urls.api + path;
  const close = (accountId: string, symbol: string, query = '', headers: Record<string, string> = {}) =>
    http('DELETE', api(`/accounts/${accountId}/positions/${symbol}${query}`), { token: writer, headers });
  const getOrder = (accountId: string, id: string) => http('GET', api(`/oms/${accountId}/order/${id}`), { token: writer });
  const status = (accountId: string, id: string, wanted: string) =>
    until(
      () => getOrder(accountId, id),
      (r) => r.body.status === wanted,
      `order ${id} ${wanted}`,
    ).then((r) => r.body);
  const position = (accountId: string, symbol: string) =>
    http('GET', api(`/accounts/${accountId}/position?symbol=${symbol}`), { token: writer }).then((r) => r.body);

  it('refuses with a problem naming the field: quantity and percentage, bad values, no position, more than the holding', async () => {
    expect((await close(aliceMargin, 'AAPL', '?quantity=1&percentage=10')).body).toMatchObject({ status: 400, field: 'percentage' });
    expect((await close(aliceMargin, 'AAPL', '?percentage=150')).body).toMatchObject({ status: 400, field: 'percentage' });
    expect((await close(aliceMargin, 'AAPL', '?quantity=abc')).body).toMatchObject({ status: 400, field: 'quantity' });
    expect((await close(aliceMargin, 'AAPL', '?quantity=11')).body).toMatchObject({ status: 422, field: 'quantity' });
    expect((await close(aliceMargin, 'AAPL', '?percentage=1')).body).toMatchObject({ status: 422, field: 'percentage' }); // 0.1 share
    const none = await close(aliceCash, 'TSLA');
    expect(none.status).toBe(404);
    expect(none.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(none.body).toMatchObject({ code: 'NOT_FOUND', field: 'symbol' });
    expect((await close(aliceMargin, 'NOPE')).body).toMatchObject({ status: 404, field: 'symbol' });
  });

  it('closing while a sell is working closes only the quantity that sell does not sell; then 409 naming the symbol', async () => {
    const resting = await http('POST', api('/oms/order'), {
      token: writer,
      body: {
        accountId: aliceMargin,
        symbol: 'AAPL',
        side: 'SELL',
        type: 'LIMIT',
        timeInForce: 'GTC',
        quantity: '4',
        limitPrice: '250.00',
      },
    });
    expect(resting.status).toBe(201);
    const res = await close(aliceMargin, 'AAPL');
    expect(res.status).toBe(200);
    conforms('DELETE', '/accounts/{accountId}/positions/{symbol}', 200, res.body);
    expect(res.body).toMatchObject({ symbol: 'AAPL', side: 'SELL', type: 'MARKET', timeInForce: 'DAY', quantity: '6' });
    await status(aliceMargin, res.body.id, 'FILLED');
    expect((await getOrder(aliceMargin, resting.body.id)).body).toMatchObject({ status: 'NEW', filledQuantity: '0' });
    await until(
      () => position(aliceMargin, 'AAPL'),
      (b) => b.quantity === '4',
      'AAPL 4 left',
    );
    // What is left is all being sold already.
    expect((await close(aliceMargin, 'AAPL')).body).toMatchObject({ status: 409, code: 'CONFLICT', field: 'symbol' });
  });

  it('is idempotent: a retry with the key answers the same order; the key with another close is refused', async () => {
    const key = { 'Idempotency-Key': `close-${randomUUID()}` };
    const [a, b] = await Promise.all([close(aliceMargin, 'MSFT', '?quantity=2', key), close(aliceMargin, 'MSFT', '?quantity=2', key)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body.id).toBe(a.body.id);
    await status(aliceMargin, a.body.id, 'FILLED');
    const again = await close(aliceMargin, 'MSFT', '?quantity=2', key);
    expect(again.body).toMatchObject({ id: a.body.id, status: 'FILLED' });
    expect((await close(aliceMargin, 'MSFT', '?quantity=1', key)).body).toMatchObject({ status: 422, field: 'idempotencyKey' });
    const orders = (await http('GET', api(`/oms/${aliceMargin}/orders?limit=100`), { token: writer })).body.orders;
    expect(orders.filter((o: { symbol: string; side: string; quantity: string }) => o.symbol === 'MSFT' && o.side === 'SELL')).toHaveLength(
      1,
    );
  });

  it('closing every position cancels the working orders first, then sells each holding; a retry answers the same orders', async () => {
    await until(
      () => position(aliceMargin, 'MSFT'),
      (b) => b.quantity === '3',
      'MSFT 3',
    );
    const buy = await http('POST', api('/oms/order'), {
      token: writer,
      body: { accountId: aliceMargin, symbol: 'MSFT', side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', quantity: '1', limitPrice: '300.00' },
    });
    expect(buy.status).toBe(201);
    const key = { 'Idempotency-Key': `close-all-${randomUUID()}` };
    const res = await http('DELETE', api(`/accounts/${aliceMargin}/positions`), { token: writer, headers: key });
    expect(res.status).toBe(200);
    conforms('DELETE', '/accounts/{accountId}/positions', 200, res.body);
    expect(res.body.accountId).toBe(aliceMargin);
    const bySymbol = Object.fromEntries(res.body.orders.map((o: { symbol: string; quantity: string }) => [o.symbol, o.quantity]));
    expect(bySymbol).toEqual({ AAPL: '4', MSFT: '3' }); // the resting AAPL sell was cancelled first, so all 4 are closed
    expect((await getOrder(aliceMargin, buy.body.id)).body.status).toBe('CANCELLED');
    const retry = await http('DELETE', api(`/accounts/${aliceMargin}/positions`), { token: writer, headers: key });
    expect(retry.body.orders.map((o: { id: string }) => o.id).sort()).toEqual(res.body.orders.map((o: { id: string }) => o.id).sort());
    for (const o of res.body.orders) await status(aliceMargin, o.id, 'FILLED');
    for (const symbol of ['AAPL', 'MSFT'])
      await until(
        () => http('GET', api(`/accounts/${aliceMargin}/position?symbol=${symbol}`), { token: writer }),
        (r) => r.status === 404 || r.body.quantity === '0',
        `${symbol} closed`,
      );
    await until(
      () => http('GET', api(`/banking/${aliceMargin}/balance/USD`), { token: writer }).then((r) => r.body),
      (b) => b.held === '0.00',
      'no hold left',
    );
    // Nothing left to close: an empty list.
    expect((await http('DELETE', api(`/accounts/${aliceMargin}/positions`), { token: writer })).body.orders).toEqual([]);
  });

  it('GraphQL: closePosition is the same operation (its order-budget charge: libs/gateway-service order-budget.spec.ts)', async () => {
    const res = await http('POST', p.urls.gateway, {
      token: writer,
      body: {
        query: 'mutation($i: ClosePositionInput!) { closePosition(input: $i) { id } }',
        variables: { i: { accountId: aliceCash, symbol: 'AAPL' } },
      },
    });
    expect(res.body.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', field: 'symbol' });
  });
});
