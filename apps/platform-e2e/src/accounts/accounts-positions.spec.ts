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
const bobCash = DEMO_ACCOUNTS[2]!.id;

interface PositionBody {
  symbol: string;
  quantity: string;
  quantityAvailable: string;
  averageCost: string;
  costBasis: string;
  marketPrice: string;
  marketValue: string;
  unrealizedPnl: string;
  unrealizedPnlPercent: string | null;
  realizedPnl: string;
  dayChange: string;
  dayChangePercent: string | null;
}

/**
 * Positions from outside, after fills the test makes: the quantity working sells have not
 * already promised, P&L and day change in percent (exact decimal strings), and closed holdings
 * left out of the list unless asked for.
 */
describe('accounts: positions after fills, with working sells and closed holdings', () => {
  let p: TestPlatform;
  let writer: string;
  /** What each buy filled at (one fill each: liquidity 100 a pass). */
  const boughtAt: Record<string, string> = {};
  let msftSoldAt: string;
  let workingStop: string;

  const api = (path: string) => p.urls.api + path;
  const order = async (body: Record<string, string>) => {
    const res = await http('POST', api('/oms/order'), { token: writer, body: { accountId: aliceCash, timeInForce: 'DAY', ...body } });
    if (res.status !== 201) throw new Error(`order refused: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as string;
  };
  const filled = (id: string) =>
    until(
      () => http('GET', api(`/oms/${aliceCash}/order/${id}`), { token: writer }).then((r) => r.body),
      (o) => o.status === 'FILLED',
      `order ${id} to fill`,
    );
  const holding = (symbol: string, quantity: string) =>
    until(
      () => http('GET', api(`/accounts/${aliceCash}/position?symbol=${symbol}`), { token: writer }).then((r) => r.body),
      (b) => b.quantity === quantity,
      `${symbol} ${quantity} settled`,
    );
  const positions = async (query = '') => {
    const res = await http('GET', api(`/accounts/${aliceCash}/positions${query}`), { token: writer });
    expect(res.status).toBe(200);
    conforms('GET', '/accounts/{accountId}/positions', 200, res.body);
    return res.body.positions as PositionBody[];
  };

  beforeAll(async () => {
    // No commission: the average cost is the fill price itself.
    p = await startOrdersPlatform({ OMS_FILL_LIQUIDITY: '100', OMS_COMMISSION_RATE: '0' });
    writer = await patSession(p, alice.email, 'READ_WRITE');
    await p.oms.feed.setPrice('AAPL', '190.00');
    await p.oms.feed.setPrice('MSFT', '400.00');
    for (const [symbol, quantity] of [
      ['AAPL', '10'],
      ['MSFT', '3'],
    ] as const) {
      boughtAt[symbol] = (await filled(await order({ symbol, side: 'BUY', type: 'MARKET', quantity }))).averageFillPrice;
      await holding(symbol, quantity);
    }
    // The market moves after the buys; MSFT is sold out at once.
    await p.oms.feed.setPrice('AAPL', '200.00');
    msftSoldAt = (await filled(await order({ symbol: 'MSFT', side: 'SELL', type: 'MARKET', quantity: '3' }))).averageFillPrice;
    await holding('MSFT', '0');
    // Working sells that promise 4 + 1 of the 10 AAPL: a limit above the market, a stop below it.
    await order({ symbol: 'AAPL', side: 'SELL', type: 'LIMIT', timeInForce: 'GTC', quantity: '4', limitPrice: '250.00' });
    workingStop = await order({ symbol: 'AAPL', side: 'SELL', type: 'STOP', timeInForce: 'GTC', quantity: '1', stopPrice: '150.00' });
  }, 90_000);
  afterAll(() => p?.stop());

  it('answers each field exactly: the quantity not promised to working sells, P&L and day change in percent', async () => {
    const cost = new Decimal(boughtAt['AAPL']!).times(10);
    const pnl = new Decimal('2000.00').minus(cost);
    expect(await positions()).toEqual([
      {
        symbol: 'AAPL',
        quantity: '10',
        quantityAvailable: '5', // 10 − (4 + 1) the working sells promise
        averageCost: boughtAt['AAPL'],
        costBasis: cost.toFixed(2),
        marketPrice: '200.00',
        marketValue: '2000.00',
        unrealizedPnl: pnl.toFixed(2),
        unrealizedPnlPercent: pnl.div(cost).times(100).toFixed(2, Decimal.ROUND_HALF_UP),
        realizedPnl: '0.00',
        dayChange: '125.60', // 10 × (200.00 − 187.44)
        dayChangePercent: '6.70', // 12.56 / 187.44 = 6.7008…%
        currency: 'USD',
        updatedAt: expect.any(String),
      },
    ]);
  });

  it('keeps closed holdings (quantity 0) with includeClosed=true, with their realised P&L and no P&L percentage', async () => {
    const all = await positions('?includeClosed=true');
    expect(all.map((h) => h.symbol)).toEqual(['AAPL', 'MSFT']);
    expect(all[1]).toEqual({
      symbol: 'MSFT',
      quantity: '0',
      quantityAvailable: '0',
      averageCost: boughtAt['MSFT'],
      costBasis: '0.00',
      marketPrice: '400.00',
      marketValue: '0.00',
      unrealizedPnl: '0.00',
      unrealizedPnlPercent: null, // nothing invested: no percentage
      realizedPnl: new Decimal(msftSoldAt).minus(boughtAt['MSFT']!).times(3).toFixed(2),
      dayChange: '0.00',
      dayChangePercent: '-4.08', // (400.00 − 417.02) / 417.02 = −4.0813…%
      currency: 'USD',
      updatedAt: expect.any(String),
    });
    expect(await positions('?includeClosed=false')).toEqual(await positions());
    // Paged, the closed holding is on the second page, with a cursor of that list only.
    const first = await http('GET', api(`/accounts/${aliceCash}/positions?includeClosed=true&limit=1`), { token: writer });
    const second = await http(
      'GET',
      api(`/accounts/${aliceCash}/positions?includeClosed=true&limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`),
      { token: writer },
    );
    expect(second.body).toMatchObject({ positions: [{ symbol: 'MSFT', quantity: '0' }], nextCursor: null });
    const mixed = await http('GET', api(`/accounts/${aliceCash}/positions?cursor=${encodeURIComponent(first.body.nextCursor)}`), {
      token: writer,
    });
    expect(mixed).toMatchObject({ status: 400, body: { code: 'BAD_USER_INPUT', field: 'cursor' } });
    for (const bad of ['yes', '1', 'TRUE']) {
      const res = await http('GET', api(`/accounts/${aliceCash}/positions?includeClosed=${bad}`), { token: writer });
      expect(res).toMatchObject({ status: 400, body: { code: 'BAD_USER_INPUT', field: 'includeClosed' } });
    }
    // One holding by symbol still answers a closed one.
    expect((await http('GET', api(`/accounts/${aliceCash}/position?symbol=MSFT`), { token: writer })).body).toMatchObject({
      symbol: 'MSFT',
      quantity: '0',
      quantityAvailable: '0',
    });
  });

  it('frees the shares when a working sell is cancelled, and agrees with what a position close would sell', async () => {
    expect((await http('DELETE', api(`/oms/order?orderId=${workingStop}`), { token: writer })).status).toBe(200);
    await until(
      () => positions(),
      (h) => h[0]?.quantityAvailable === '6',
      'AAPL 6 free once the stop is cancelled',
    );
    // The close sells exactly the free quantity.
    await p.oms.engine.pause();
    try {
      const close = await http('DELETE', api(`/accounts/${aliceCash}/positions/AAPL`), { token: writer });
      expect(close.body).toMatchObject({ side: 'SELL', quantity: '6' });
      expect((await positions())[0]).toMatchObject({ quantity: '10', quantityAvailable: '0' });
      expect((await http('DELETE', api(`/oms/order?orderId=${close.body.id}`), { token: writer })).status).toBe(200);
    } finally {
      p.oms.engine.resume();
    }
  });

  it('is the same through GraphQL, where what oms tells accounts stays internal (@inaccessible)', async () => {
    const query = `query($id: ID!) { account(id: $id) { positions(includeClosed: true) { nodes { symbol quantityAvailable unrealizedPnlPercent dayChangePercent } } } }`;
    const res = await http('POST', p.urls.gateway, { token: writer, body: { query, variables: { id: aliceCash } } });
    expect(res.body.errors).toBeUndefined();
    const rest = await positions('?includeClosed=true');
    expect(res.body.data.account.positions.nodes).toEqual(
      rest.map(({ symbol, quantityAvailable, unrealizedPnlPercent, dayChangePercent }) => ({
        symbol,
        quantityAvailable,
        unrealizedPnlPercent,
        dayChangePercent,
      })),
    );
    const internal = await http('POST', p.urls.gateway, {
      token: writer,
      body: { query: `{ account(id: "${aliceCash}") { positions { nodes { openSellQuantity } } } }` },
    });
    expect(internal.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    // Another user's positions are not there, closed ones included.
    const other = await http('GET', api(`/accounts/${bobCash}/positions?includeClosed=true`), { token: writer });
    expect(other).toMatchObject({ status: 404, body: { code: 'NOT_FOUND', field: 'accountId' } });
  });
});
