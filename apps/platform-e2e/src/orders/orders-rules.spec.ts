import { http } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { fund, recordingStatements, startOrdersPlatform, until } from '../support/orders-platform';
import { patSession } from '../support/sessions';
import type { TestPlatform } from '../support/test-platform';

const [alice, bob] = DEMO_USERS as [(typeof DEMO_USERS)[0], (typeof DEMO_USERS)[0]];
const aliceCash = DEMO_ACCOUNTS[0]!.id;
const aliceMargin = DEMO_ACCOUNTS[1]!.id; // holds 10 AAPL

/** The first Monday-to-Friday date after `instant`'s UTC date, as YYYY-MM-DD. */
function nextWeekday(instant: string): string {
  const day = new Date(`${instant.slice(0, 10)}T00:00:00Z`);
  do day.setUTCDate(day.getUTCDate() + 1);
  while (day.getUTCDay() === 0 || day.getUTCDay() === 6);
  return day.toISOString().slice(0, 10);
}

/** The engine is fair, and orders follow a broker's rules (minimum commission, price band, open-order cap). */
describe('order rules and a fair engine', () => {
  let p: TestPlatform;
  let alices: string;
  let bobs: string;
  let bobAccount: string;

  beforeAll(async () => {
    p = await startOrdersPlatform({ OMS_MIN_COMMISSION: '1.00', OMS_PRICE_BAND: '0.5', OMS_MAX_OPEN_ORDERS_PER_ACCOUNT: '30' });
    alices = await patSession(p, alice.email, 'READ_WRITE');
    bobs = await patSession(p, bob.email, 'READ_WRITE');
    bobAccount = (await http('GET', `${p.urls.api}/accounts`, { token: bobs })).body.accounts[0].id;
    await fund(p, bobs, bobAccount, '5000');
    await p.oms.feed.setPrice('AAPL', '100.00');
  }, 60_000);
  afterAll(() => p?.stop());

  const place = (token: string, body: Record<string, unknown>) => http('POST', `${p.urls.api}/oms/order`, { token, body });
  const buy = (accountId: string, extra: Record<string, unknown>) => ({
    accountId,
    symbol: 'AAPL',
    side: 'BUY',
    timeInForce: 'GTC',
    quantity: '1',
    ...extra,
  });

  it('charges at least the minimum commission per order, and reserves it', async () => {
    const res = await place(alices, buy(aliceCash, { type: 'MARKET', timeInForce: 'DAY', quantity: '1' }));
    expect(res.status).toBe(201);
    expect(res.body.reservedAmount).toBe('106.06'); // 1 × the ask 100.05 × (1 + 5 % collar), on the tick, + the 1.00 minimum
    const filled = await until(
      () => http('GET', `${p.urls.api}/oms/${aliceCash}/order/${res.body.id}`, { token: alices }),
      (r) => r.body.status === 'FILLED',
      'the buy to fill',
    );
    expect(filled.body).toMatchObject({ grossAmount: '100.05', commission: '1.00' }); // at the ask; 0.05 by the rate alone
    const rules = await http('GET', `${p.urls.api}/oms/${aliceCash}/order/rules`, { token: alices });
    expect(rules.body).toMatchObject({ minimumCommission: '1.00', priceBand: '0.5', maxOpenOrders: 30 });
  });

  it('refuses an order worth more than one order may be (which would also overflow what is stored), naming quantity; never a 500', async () => {
    const huge = await place(alices, buy(aliceCash, { type: 'LIMIT', quantity: '999999999999', limitPrice: '149.99' }));
    expect(huge.body).toMatchObject({ status: 422, code: 'UNPROCESSABLE', field: 'quantity' });
    const whatIf = await http('POST', `${p.urls.api}/oms/what-if`, {
      token: alices,
      body: buy(aliceCash, { type: 'LIMIT', quantity: '999999999999', limitPrice: '149.99' }),
    });
    // The preview refuses it the same way, rather than pricing an order that could never be placed.
    expect(whatIf.body).toMatchObject({
      status: 422,
      code: 'UNPROCESSABLE',
      field: 'quantity',
      detail: expect.stringMatching(/one order may be worth at most 10000000/),
    });
  });

  it('refuses limit and stop prices outside the band around the last price, naming the field', async () => {
    expect((await place(alices, buy(aliceCash, { type: 'LIMIT', limitPrice: '0.01' }))).body).toMatchObject({
      status: 422,
      field: 'limitPrice',
    });
    expect((await place(alices, buy(aliceCash, { type: 'STOP', timeInForce: 'DAY', stopPrice: '151.00' }))).body).toMatchObject({
      status: 422,
      field: 'stopPrice',
    });
    expect((await place(alices, buy(aliceCash, { type: 'LIMIT', limitPrice: '50.00' }))).status).toBe(201);
  });

  it('abuse: a book full of resting orders neither starves another user nor grows past the per-account cap', async () => {
    await p.oms.engine.pause();
    try {
      // Alice fills her account's cap with bids far below the market (the old engine read the oldest 2,000 working orders first).
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) statuses.push((await place(alices, buy(aliceCash, { type: 'LIMIT', limitPrice: '51.00' }))).status);
      expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(28); // one open order is left from the band test
      const over = await place(alices, buy(aliceCash, { type: 'LIMIT', limitPrice: '51.00' }));
      expect(over.body).toMatchObject({ status: 422, field: 'accountId' });
      // Bob's market order fills on the next pass: resting orders are not even looked at.
      const market = await place(bobs, buy(bobAccount, { type: 'MARKET', timeInForce: 'DAY' }));
      expect(market.status).toBe(201);
      const { statements } = await recordingStatements(p.oms.dataSource, () => p.oms.engine.runOnce());
      expect((await http('GET', `${p.urls.api}/oms/${bobAccount}/order/${market.body.id}`, { token: bobs })).body.status).toBe('FILLED');
      expect(statements.filter((s) => /FOR UPDATE SKIP LOCKED/.test(s) && /status IN \('NEW', 'PARTIALLY_FILLED'\)/.test(s)).length).toBe(
        1,
      );
    } finally {
      p.oms.engine.resume();
    }
  });

  it('books sale proceeds as unsettled until T+1: usable for buying at once, withdrawable only once settled', async () => {
    const balance = async () => (await http('GET', `${p.urls.api}/banking/${aliceMargin}/balance/USD`, { token: alices })).body;
    const before = await balance();
    const sell = await place(alices, {
      accountId: aliceMargin,
      symbol: 'AAPL',
      side: 'SELL',
      type: 'MARKET',
      timeInForce: 'DAY',
      quantity: '2',
    });
    expect(sell.status).toBe(201);
    const sold = await until(balance, (b) => b.unsettledCash !== '0.00', 'the sale to reach banking');
    const net = Number(sold.unsettledCash);
    expect(net).toBeGreaterThan(100); // 2 × ~100 less commission
    expect(sold.availableToWithdraw).toBe(before.availableToWithdraw);
    expect(Number(sold.availableToTrade)).toBeCloseTo(Number(before.availableToTrade) + net, 2);
    const tooMuch = await http('POST', `${p.urls.api}/banking/withdraw`, {
      token: alices,
      body: { accountId: aliceMargin, amount: (Number(before.availableToWithdraw) + 1).toFixed(2), currency: 'USD' },
    });
    expect(tooMuch.status).toBe(422);
    // The settlement date comes (the clock is moved by moving the date).
    const [row] = await p.services.banking.app!.dataSource.query(
      'SELECT settle_on::text FROM sale_settlements WHERE account_id = $1 AND settled_at IS NULL',
      [aliceMargin],
    );
    // T+1: the first weekday after the trade's own (UTC) date, neither the trade date nor later.
    const trades = await http('GET', `${p.urls.api}/oms/${aliceMargin}/trades?symbol=AAPL`, { token: alices });
    const trade = trades.body.trades.find((t: { orderId: string }) => t.orderId === sell.body.id);
    expect(row.settle_on).toBe(nextWeekday(trade.executedAt));
    await p.services.banking.app!.dataSource.query('UPDATE sale_settlements SET settle_on = current_date WHERE account_id = $1', [
      aliceMargin,
    ]);
    const settled = await until(balance, (b) => b.unsettledCash === '0.00', 'the sale to settle');
    expect(Number(settled.availableToWithdraw)).toBeCloseTo(Number(before.availableToWithdraw) + net, 2);
  });
});
