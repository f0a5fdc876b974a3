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

interface Quote {
  lastPrice: string;
  bid: string;
  ask: string;
  bidSize: string;
  askSize: string;
}

/**
 * Orders fill at the quote GET /market/quotes publishes, never at the last price: market and
 * marketable limit buys at the ask, sells at the bid, at most the size quoted there per engine
 * pass; a market buy holds enough for a fill at the ask.
 */
describe('orders fill at the published quote', () => {
  let p: TestPlatform;
  let writer: string;
  beforeAll(async () => {
    // Liquidity far above any quoted size: the quote alone limits a pass.
    p = await startOrdersPlatform({ OMS_FILL_LIQUIDITY: '1000000' });
    writer = await patSession(p, alice.email, 'READ_WRITE');
  }, 60_000);
  afterAll(() => p?.stop());
  afterEach(() => p.oms.engine.resume());

  const api = (path: string) => p.urls.api + path;
  const quote = async (symbol: string): Promise<Quote> => {
    const res = await http('GET', api(`/market/quotes?symbols=${symbol}`), { token: writer });
    expect(res.status).toBe(200);
    return res.body.quotes[0];
  };
  const place = (body: Record<string, unknown>) =>
    http('POST', api('/oms/order'), { token: writer, body: { accountId: aliceCash, symbol: 'AAPL', timeInForce: 'DAY', ...body } });
  const getOrder = async (id: string) => (await http('GET', api(`/oms/${aliceCash}/order/${id}`), { token: writer })).body;
  const settled = (id: string, status: string) =>
    until(
      () => getOrder(id),
      (o) => o.status === status,
      `order ${id} ${status}`,
    );
  const balance = async () => (await http('GET', api(`/banking/${aliceCash}/balance/USD`), { token: writer })).body;
  const noHoldLeft = () => until(balance, (b) => b.held === '0.00', 'every hold given back');

  it('a market buy fills at the ask and a market sell at the bid; the buy holds enough for the ask', async () => {
    await p.oms.feed.setPrice('AAPL', '189.50');
    const q = await quote('AAPL');
    // Half of the 0.1 % spread is 0.09475, rounded up to whole cents.
    expect(q).toMatchObject({ lastPrice: '189.50', bid: '189.40', ask: '189.60' });

    const whatIf = await http('POST', api('/oms/what-if'), {
      token: writer,
      body: { accountId: aliceCash, symbol: 'AAPL', side: 'BUY', type: 'MARKET', timeInForce: 'DAY', quantity: '10' },
    });
    conforms('POST', '/oms/what-if', 200, whatIf.body);
    // The collar is 5 % above the ask: 199.08 × 10, plus the commission on that.
    expect(whatIf.body).toMatchObject({
      lastPrice: '189.50',
      estimatedPrice: q.ask,
      estimatedGrossAmount: '1896.00',
      reservedAmount: '1991.80',
    });

    const before = await balance();
    const buy = await place({ side: 'BUY', type: 'MARKET', quantity: '10' });
    expect(buy).toMatchObject({ status: 201, body: { reservedAmount: '1991.80' } });
    const bought = await settled(buy.body.id, 'FILLED');
    conforms('GET', '/oms/{accountId}/order/{orderId}', 200, bought);
    expect(bought).toMatchObject({ averageFillPrice: q.ask, grossAmount: '1896.00', commission: '0.95' });
    expect(bought.fills.map((f: { price: string }) => f.price)).toEqual([q.ask]);

    const sell = await place({ side: 'SELL', type: 'MARKET', quantity: '10' });
    expect(sell.status).toBe(201);
    const sold = await settled(sell.body.id, 'FILLED');
    expect(sold).toMatchObject({ averageFillPrice: q.bid, grossAmount: '1894.00', commission: '0.95' });
    expect(sold.fills.map((f: { price: string }) => f.price)).toEqual([q.bid]);

    const trades = (await http('GET', api(`/oms/${aliceCash}/trades?symbol=AAPL`), { token: writer })).body.trades;
    expect(trades.map((t: { side: string; price: string }) => `${t.side} ${t.price}`)).toEqual([`SELL ${q.bid}`, `BUY ${q.ask}`]);
    // The round trip costs the spread and two commissions; nothing stays held.
    const after = await until(
      balance,
      (b) => b.held === '0.00' && new Decimal(before.cash).minus(b.cash).toFixed(2) === '3.90',
      'both fills settled in banking',
    );
    expect(after.held).toBe('0.00');
  });

  it('a marketable limit fills at the quote, not at its limit; a limit between the last price and the quote waits', async () => {
    await p.oms.engine.pause();
    await p.oms.feed.setPrice('AAPL', '189.50');
    const q = await quote('AAPL');
    const resting = await place({ side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', quantity: '5', limitPrice: '189.55' });
    const buy = await place({ side: 'BUY', type: 'LIMIT', quantity: '10', limitPrice: '190.00' });
    expect(buy).toMatchObject({ status: 201, body: { reservedAmount: '1900.95' } }); // the hold is the limit's
    await p.oms.engine.runOnce();
    // At the last price 189.50 a buy limit of 189.55 would have filled; the ask is 189.60.
    expect(await getOrder(resting.body.id)).toMatchObject({ status: 'NEW', fills: [] });
    expect(await getOrder(buy.body.id)).toMatchObject({ status: 'FILLED', averageFillPrice: q.ask, grossAmount: '1896.00' });

    const sell = await place({ side: 'SELL', type: 'LIMIT', quantity: '5', limitPrice: '189.00' });
    const restingSell = await place({ side: 'SELL', type: 'LIMIT', timeInForce: 'GTC', quantity: '5', limitPrice: '189.45' });
    await p.oms.engine.runOnce();
    expect(await getOrder(sell.body.id)).toMatchObject({ status: 'FILLED', averageFillPrice: q.bid, grossAmount: '947.00' });
    expect(await getOrder(restingSell.body.id)).toMatchObject({ status: 'NEW', fills: [] });

    for (const id of [resting.body.id, restingSell.body.id])
      expect((await http('DELETE', api('/oms/order'), { token: writer, body: { orderId: id } })).status).toBe(200);
    await noHoldLeft(); // what the limit held beyond the ask came back
  });

  it('a triggered stop fills at the quote of its side', async () => {
    await p.oms.feed.setPrice('AAPL', '189.50');
    const buy = await place({ side: 'BUY', type: 'MARKET', quantity: '4' });
    await settled(buy.body.id, 'FILLED');
    const stopSell = await place({ side: 'SELL', type: 'STOP', quantity: '4', stopPrice: '180.00' });
    expect(stopSell.status).toBe(201);
    await p.oms.feed.setPrice('AAPL', '179.90');
    const low = await quote('AAPL');
    expect(low).toMatchObject({ bid: '179.81', ask: '179.99' });
    expect(await settled(stopSell.body.id, 'FILLED')).toMatchObject({ averageFillPrice: low.bid, triggeredAt: expect.any(String) });

    const stopBuy = await place({ side: 'BUY', type: 'STOP', quantity: '1', stopPrice: '185.00' });
    expect(stopBuy.status).toBe(201);
    await new Promise((r) => setTimeout(r, 200));
    expect(await getOrder(stopBuy.body.id)).toMatchObject({ status: 'NEW', triggeredAt: null });
    await p.oms.feed.setPrice('AAPL', '185.00');
    const high = await quote('AAPL');
    expect(high).toMatchObject({ ask: '185.10' });
    expect(await settled(stopBuy.body.id, 'FILLED')).toMatchObject({ averageFillPrice: high.ask });
    await noHoldLeft();
  });

  it('an order bigger than the quoted size fills that size per pass, at the quote each time', async () => {
    await p.oms.engine.pause();
    await p.oms.feed.setPrice('AAPL', '1.00');
    const q = await quote('AAPL');
    expect(q).toMatchObject({ bid: '0.99', ask: '1.01' });
    const askSize = new Decimal(q.askSize);
    const bidSize = new Decimal(q.bidSize);
    // Enough to sell more than the bid size afterwards.
    const quantity = Decimal.max(askSize, bidSize).times(2).plus(37);
    const buy = await place({ side: 'BUY', type: 'MARKET', quantity: quantity.toFixed() });
    expect(buy.status).toBe(201);
    let passes = 0;
    for (let pass = 0; pass < 30 && (await getOrder(buy.body.id)).status !== 'FILLED'; pass++) {
      await p.oms.engine.runOnce();
      passes++;
      const o = await getOrder(buy.body.id);
      if (pass === 0) expect(o).toMatchObject({ status: 'PARTIALLY_FILLED', filledQuantity: askSize.toFixed() });
    }
    const bought = await getOrder(buy.body.id);
    expect(bought.status).toBe('FILLED');
    // Each pass takes the ask size and no more, the last one what is left.
    for (const f of bought.fills)
      expect({ price: f.price, within: new Decimal(f.quantity).lte(askSize) }).toEqual({ price: q.ask, within: true });
    expect(bought.fills.filter((f: { quantity: string }) => f.quantity === askSize.toFixed()).length).toBe(bought.fills.length - 1);
    expect(passes).toBe(bought.fills.length); // one fill per pass

    const sell = await place({ side: 'SELL', type: 'MARKET', quantity: bidSize.plus(37).toFixed() });
    await p.oms.engine.runOnce();
    expect(await getOrder(sell.body.id)).toMatchObject({ status: 'PARTIALLY_FILLED', filledQuantity: q.bidSize, averageFillPrice: q.bid });
    await p.oms.engine.runOnce();
    const sold = await getOrder(sell.body.id);
    expect(sold).toMatchObject({ status: 'FILLED', averageFillPrice: q.bid });
    expect(sold.fills.map((f: { quantity: string; price: string }) => `${f.quantity} at ${f.price}`).sort()).toEqual(
      [`${q.bidSize} at ${q.bid}`, `37 at ${q.bid}`].sort(),
    );

    // An IOC bigger than the ask size takes the ask size and cancels the rest.
    const ioc = await place({ side: 'BUY', type: 'MARKET', timeInForce: 'IOC', quantity: askSize.plus(1).toFixed() });
    await p.oms.engine.runOnce();
    expect(await getOrder(ioc.body.id)).toMatchObject({ status: 'CANCELLED', filledQuantity: q.askSize, averageFillPrice: q.ask });
    await noHoldLeft();
  });
});
