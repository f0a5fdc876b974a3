import Decimal from 'decimal.js';
import { openApiDocument } from '@trading/app-rest-facade';
import { http, openApiResponseValidator } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '../demo-data';
import { startOrdersPlatform, until } from './orders-platform';
import { patSession } from './sessions';
import type { TestPlatform } from './test-platform';

const conforms = openApiResponseValidator(openApiDocument);
const [alice] = DEMO_USERS as [(typeof DEMO_USERS)[0]];
const aliceCash = DEMO_ACCOUNTS[0]!.id; // 10000 USD, no positions

/** Issue 6: each order type's lifecycle, partial fills, IOC/FOK/DAY rules and the cancel race, over REST. */
describe('order lifecycle', () => {
  let p: TestPlatform;
  let writer: string;
  beforeAll(async () => {
    p = await startOrdersPlatform({ OMS_FILL_LIQUIDITY: '100' });
    writer = await patSession(p, alice.email, 'READ_WRITE');
  }, 60_000);
  afterAll(() => p?.stop());

  const api = (path: string) => p.urls.api + path;
  const place = (body: Record<string, unknown>, headers: Record<string, string> = {}) => http('POST', api('/oms/order'), { token: writer, body, headers });
  const getOrder = (accountId: string, id: string) => http('GET', api(`/oms/${accountId}/order/${id}`), { token: writer });
  const settled = (accountId: string, id: string, status: string) =>
    until(() => getOrder(accountId, id), (r) => r.body.status === status, `order ${id} ${status}`).then((r) => r.body);
  const balance = async (accountId: string) => (await http('GET', api(`/banking/${accountId}/balance/USD`), { token: writer })).body;
  const position = async (accountId: string, symbol: string) => (await http('GET', api(`/accounts/${accountId}/position?symbol=${symbol}`), { token: writer })).body;

  it('a market buy fills at once; banking takes gross + commission out of the hold, accounts books the position', async () => {
    await p.oms.feed.setPrice('AAPL', '190.00');
    const before = await balance(aliceCash);
    const res = await place({ accountId: aliceCash, symbol: 'AAPL', side: 'BUY', type: 'MARKET', timeInForce: 'DAY', quantity: '10', clientOrderId: 'lifecycle-mkt-1' });
    expect(res.status).toBe(201);
    conforms('POST', '/oms/order', 201, res.body);
    expect(res.body).toMatchObject({ status: 'NEW', clientOrderId: 'lifecycle-mkt-1', reservedAmount: '1996.00', filledQuantity: '0' });
    const order = await settled(aliceCash, res.body.id, 'FILLED');
    conforms('GET', '/oms/{accountId}/order/{orderId}', 200, order);
    expect(order).toMatchObject({ filledQuantity: '10', averageFillPrice: '190', grossAmount: '1900.00', commission: '0.95' });
    expect(order.fills).toHaveLength(1);
    expect(order.fills[0]).toMatchObject({ quantity: '10', price: '190', grossAmount: '1900.00', commission: '0.95', netAmount: '-1900.95' });
    for (const t of ['createdAt', 'submittedAt', 'filledAt']) expect(order[t]).toEqual(expect.any(String));
    const after = await until(() => balance(aliceCash), (b) => b.held === '0.00' && b.cash !== before.cash, 'settlement in banking');
    expect(new Decimal(before.cash).minus(after.cash).toFixed(2)).toBe('1900.95');
    const pos = await until(() => position(aliceCash, 'AAPL'), (b) => b.quantity === '10', 'settlement in accounts');
    expect(pos).toMatchObject({ quantity: '10', averageCost: '190.095' });
  });
});
