import { http } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { recordingStatements, startOrdersPlatform, until } from '../support/orders-platform';
import { patSession } from '../support/sessions';
import type { TestPlatform } from '../support/test-platform';

const [alice] = DEMO_USERS as [(typeof DEMO_USERS)[0]];
const aliceCash = DEMO_ACCOUNTS[0]!.id;

/** No N+1: a list of orders with their fills costs one trades query, however many orders. */
describe('order list fields are batched', () => {
  let p: TestPlatform;
  let writer: string;
  beforeAll(async () => {
    p = await startOrdersPlatform();
    writer = await patSession(p, alice.email, 'READ_WRITE');
  }, 60_000);
  afterAll(() => p?.stop());

  it('reads the fills of every order in an answer with one query', async () => {
    await p.oms.feed.setPrice('MSFT', '100.00');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await http('POST', `${p.urls.api}/oms/order`, {
        token: writer,
        body: { accountId: aliceCash, symbol: 'MSFT', side: 'BUY', type: 'MARKET', timeInForce: 'DAY', quantity: '1' },
      });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    for (const id of ids)
      await until(
        () => http('GET', `${p.urls.api}/oms/${aliceCash}/order/${id}`, { token: writer }),
        (r) => r.body.status === 'FILLED',
        `order ${id} filled`,
      );

    // Count the statements the OMS sends while answering.
    const { result: res, statements } = await recordingStatements(p.oms.dataSource, () =>
      http('POST', p.urls.gateway, {
        token: writer,
        body: {
          query: 'query($id: ID!) { account(id: $id) { orders(limit: 20) { nodes { id fills { quantity price } } } } }',
          variables: { id: aliceCash },
        },
      }),
    );
    expect(res.body.errors).toBeUndefined();
    const nodes = res.body.data.account.orders.nodes as Array<{ id: string; fills: unknown[] }>;
    expect(nodes.filter((o) => ids.includes(o.id)).every((o) => o.fills.length === 1)).toBe(true);
    expect(statements.filter((s) => /FROM trades/.test(s))).toHaveLength(1);
  });

  it('answers a placed order that has filled nothing without reading fills or legs', async () => {
    await p.oms.feed.setPrice('MSFT', '100.00');
    const order = {
      accountId: aliceCash,
      symbol: 'MSFT',
      side: 'BUY',
      type: 'LIMIT',
      timeInForce: 'GTC',
      quantity: '1',
      limitPrice: '50.00',
    };
    const { result: res, statements } = await recordingStatements(p.oms.dataSource, () =>
      http('POST', `${p.urls.api}/oms/order`, { token: writer, body: order }),
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'NEW', filledQuantity: '0', legs: [], fills: [] });
    expect(statements.filter((s) => /FROM trades|parent_order_id = ANY/.test(s))).toEqual([]);

    // A bracket's entry still answers its legs, read in one query.
    const { result: bracket, statements: read } = await recordingStatements(p.oms.dataSource, () =>
      http('POST', `${p.urls.api}/oms/order`, {
        token: writer,
        body: { ...order, orderClass: 'BRACKET', takeProfit: { limitPrice: '60.00' }, stopLoss: { stopPrice: '40.00' } },
      }),
    );
    expect(bracket.status).toBe(201);
    expect(bracket.body.legs.map((l: { leg: string }) => l.leg).sort()).toEqual(['STOP_LOSS', 'TAKE_PROFIT']);
    expect(read.filter((s) => /parent_order_id = ANY/.test(s))).toHaveLength(1);
  });
});
