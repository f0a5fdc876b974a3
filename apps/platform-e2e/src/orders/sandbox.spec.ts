import Decimal from 'decimal.js';
import { decodeJwt } from 'jose';
import { SCOPES } from '@trading/auth';
import { openApiDocument } from '@trading/rest-facade-service';
import { http, openApiResponseValidator } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { ServiceDatabases } from '../support/invariants';
import { extraAuth, provisionApp, tokensFor } from '../support/oauth-helpers';
import { startOrdersPlatform, until } from '../support/orders-platform';
import { patSession } from '../support/sessions';
import { inDays, type TestPlatform } from '../support/test-platform';

const conforms = openApiResponseValidator(openApiDocument);
const [alice, bob] = DEMO_USERS as [(typeof DEMO_USERS)[0], (typeof DEMO_USERS)[0]];
const aliceCash = DEMO_ACCOUNTS[0]!.id; // USD, no positions
const aliceMargin = DEMO_ACCOUNTS[1]!.id; // USD, holds 10 AAPL
const SANDBOX_SCOPES = 'read:accounts read:orders write:orders read:banking write:banking read:market';

/** What the commission schedule takes of an order's cumulative traded value (the platform's 0.05 %, no minimum), in cents. */
const commissionOn = (value: Decimal.Value) => new Decimal(value).times('0.0005').toDecimalPlaces(2, Decimal.ROUND_HALF_UP);

/**
 * The DEV sandbox: a DEV deployment's token drives its own orders and transfers to every outcome
 * on demand (fills through the engine's own fill, rejections, expiries, failed transfers), the
 * money following exactly as for real ones and the market left where it is; anyone else's gets
 * 404, and a token of another environment 403 naming it.
 */
describe('the DEV sandbox', () => {
  let p: TestPlatform;
  let token: string;
  let bobToken: string;

  beforeAll(async () => {
    p = await startOrdersPlatform();
    const app = await provisionApp(p, { scopes: [...SCOPES] }, [...SCOPES]);
    token = (await tokensFor(p, app, alice, SANDBOX_SCOPES)).access_token;
    bobToken = await patSession(p, bob.email, 'READ_WRITE');
    await p.oms.feed.setPrice('AAPL', '190.00'); // bid 189.90, ask 190.10: the resting buys below never meet it
  }, 90_000);
  afterAll(() => p?.stop());

  const api = (path: string) => p.urls.api + path;
  const post = (path: string, body?: unknown, as = token) => http('POST', api(path), { token: as, body });
  const balance = async () => (await http('GET', api(`/banking/${aliceCash}/balance/USD`), { token })).body;
  /** The balance once nothing is held any more (an earlier test's closes are settled by banking from their events). */
  const settledBalance = () => until(balance, (b) => b.held === '0.00', 'no cash held');
  const holding = async () => {
    const res = await http('GET', api(`/accounts/${aliceCash}/position?symbol=AAPL`), { token });
    return res.status === 200 ? new Decimal(res.body.quantity) : new Decimal(0);
  };
  const getOrder = async (id: string) => (await http('GET', api(`/oms/${aliceCash}/order/${id}`), { token })).body;
  const restingBuy = async (quantity: string, limitPrice = '150.00') => {
    const res = await post('/oms/order', {
      accountId: aliceCash,
      symbol: 'AAPL',
      side: 'BUY',
      type: 'LIMIT',
      timeInForce: 'GTC',
      quantity,
      limitPrice,
    });
    expect(res).toMatchObject({ status: 201, body: { status: 'NEW' } });
    return res.body as { id: string; reservedAmount: string };
  };
  /** The market as the OMS keeps it: the instrument's last price and its time, and how many ticks it has. */
  const market = async () =>
    (
      await p.oms.dataSource.query(
        `SELECT last_price::text, price_at, (SELECT count(*)::int FROM market_ticks WHERE symbol = 'AAPL') AS ticks
           FROM instruments WHERE symbol = 'AAPL'`,
      )
    )[0];
  /** Waits until banking has no hold left and the cash has moved by `delta` from `before`. */
  const cashSettles = (before: { cash: string }, delta: string) =>
    until(
      balance,
      (b) => new Decimal(b.cash).minus(before.cash).eq(delta) && b.held === '0.00',
      `cash to move by ${delta} with nothing held`,
    );

  it("the platform's DEV auth names its environment in the access tokens it issues, OAuth and PAT alike", () => {
    expect(decodeJwt(token)['env']).toBe('DEV');
    expect(decodeJwt(bobToken)['env']).toBe('DEV');
  });

  it('a partial fill, then the rest at a better price: trades through the engine, cash and holding exact, the market unmoved', async () => {
    const [cashBefore, heldBefore, marketBefore] = [await settledBalance(), await holding(), await market()];
    const order = await restingBuy('10');

    const partial = await post(`/sandbox/orders/${order.id}/fill`, { quantity: '4' });
    expect(partial.status).toBe(200);
    conforms('POST', '/sandbox/orders/{orderId}/fill', 200, partial.body);
    // Its own price by default: the limit.
    expect(partial.body).toMatchObject({
      status: 'PARTIALLY_FILLED',
      filledQuantity: '4',
      remainingQuantity: '6',
      averageFillPrice: '150.00',
    });
    expect(partial.body.fills).toEqual([
      expect.objectContaining({ quantity: '4', price: '150.00', grossAmount: '600.00', commission: '0.30', netAmount: '-600.30' }),
    ]);
    // The order keeps holding cash for its remainder; the fill's cost is booked and the holding grows.
    await until(balance, (b) => new Decimal(cashBefore.cash).minus(b.cash).eq('600.30'), 'the partial fill booked in banking');
    await until(holding, (q) => q.minus(heldBefore).eq(4), 'the partial fill booked in accounts');
    expect(new Decimal((await balance()).held).gt(0)).toBe(true);

    const rest = await post(`/sandbox/orders/${order.id}/fill`, { price: '149.50' });
    expect(rest.status).toBe(200);
    // Commission is on the order's cumulative value: 0.05 % of 1497.00 rounded, less what the first fill took.
    const secondCommission = commissionOn('1497.00').minus('0.30').toFixed(2);
    expect(rest.body).toMatchObject({ status: 'FILLED', filledQuantity: '10', remainingQuantity: '0', grossAmount: '1497.00' });
    expect(rest.body.fills[1]).toMatchObject({ quantity: '6', price: '149.50', grossAmount: '897.00', commission: secondCommission });
    await cashSettles(cashBefore, new Decimal('-1497.00').minus(commissionOn('1497.00')).toFixed(2));
    await until(holding, (q) => q.minus(heldBefore).eq(10), 'the fill booked in accounts');
    expect((await http('GET', api(`/accounts/${aliceCash}/position?symbol=AAPL`), { token })).body.quantity).toBe(
      heldBefore.plus(10).toString(),
    );

    // The same events as a fill by the market: each trade, the order's state, then its close.
    const events: Array<{ type: string; status: string | null }> = await p.oms.dataSource.query(
      `SELECT type, payload->'order'->>'status' AS status FROM outbox
        WHERE payload->'order'->>'id' = $1 OR payload->'trade'->>'orderId' = $1 ORDER BY seq`,
      [order.id],
    );
    expect(events).toEqual([
      { type: 'order.updated', status: 'NEW' },
      { type: 'trade.executed', status: null },
      { type: 'order.updated', status: 'PARTIALLY_FILLED' },
      { type: 'trade.executed', status: null },
      { type: 'order.updated', status: 'FILLED' },
      { type: 'order.closed', status: 'FILLED' },
    ]);
    // The shared market did not move: no tick, the same last price.
    expect(await market()).toEqual(marketBefore);
    const quote = (await http('GET', api('/market/quotes?symbols=AAPL'), { token })).body;
    expect(JSON.stringify(quote)).toContain('"190.00"');

    // A filled order fills no more.
    const again = await post(`/sandbox/orders/${order.id}/fill`);
    expect(again).toMatchObject({ status: 409, body: { code: 'CONFLICT', field: 'orderId' } });
  });

  it('sells: a stop not triggered fills at the bid (the quote the engine would use), a limit at its limit; proceeds and holding exact', async () => {
    const balanceOf = async () => (await http('GET', api(`/banking/${aliceMargin}/balance/USD`), { token })).body;
    const sharesOf = async () =>
      new Decimal((await http('GET', api(`/accounts/${aliceMargin}/position?symbol=AAPL`), { token })).body.quantity);
    const [before, sharesBefore] = [await balanceOf(), await sharesOf()];
    const sell = async (body: Record<string, unknown>) => {
      const res = await post('/oms/order', { accountId: aliceMargin, symbol: 'AAPL', side: 'SELL', timeInForce: 'GTC', ...body });
      expect(res).toMatchObject({ status: 201, body: { status: 'NEW' } });
      return res.body.id as string;
    };
    // Once filled a stop is triggered, and its remainder would be the engine's to fill at once: the whole of it here.
    const stop = await sell({ type: 'STOP', quantity: '1', stopPrice: '100.00' });
    const byStop = await post(`/sandbox/orders/${stop}/fill`);
    expect(byStop).toMatchObject({ status: 200, body: { status: 'FILLED', triggeredAt: expect.any(String) } });
    expect(byStop.body.fills[0]).toMatchObject({ price: '189.90', grossAmount: '189.90', commission: commissionOn('189.90').toFixed(2) });
    const limit = await sell({ type: 'LIMIT', quantity: '3', limitPrice: '250.00' });
    const byLimit = await post(`/sandbox/orders/${limit}/fill`);
    expect(byLimit).toMatchObject({ status: 200, body: { status: 'FILLED', averageFillPrice: '250.00', grossAmount: '750.00' } });
    // A sell below its limit is not one the order allows.
    const another = await sell({ type: 'LIMIT', quantity: '1', limitPrice: '250.00' });
    expect(await post(`/sandbox/orders/${another}/fill`, { price: '249.99' })).toMatchObject({ status: 422, body: { field: 'price' } });
    expect((await post(`/sandbox/orders/${another}/reject`)).status).toBe(200);
    const proceeds = new Decimal('189.90').minus(commissionOn('189.90')).plus('750.00').minus(commissionOn('750.00'));
    await until(balanceOf, (b) => new Decimal(b.cash).minus(before.cash).eq(proceeds), `cash to grow by ${proceeds.toFixed(2)}`);
    await until(sharesOf, (q) => sharesBefore.minus(q).eq(4), 'four shares sold in accounts');
  });

  it('refuses a fill the order does not allow, naming the field, and changes nothing', async () => {
    const order = await restingBuy('3');
    const cases: Array<[unknown, number, string]> = [
      [{ price: '150.01' }, 422, 'price'], // a buy above its limit
      [{ price: '149.995' }, 422, 'price'], // off the tick
      [{ price: '0' }, 400, 'price'],
      [{ quantity: '4' }, 422, 'quantity'], // beyond the remainder
      [{ quantity: '0' }, 400, 'quantity'],
      [{ quantity: '-1' }, 400, 'quantity'],
      [{ quantity: '1.5' }, 422, 'quantity'], // not a whole lot
      [{ quantity: 2 }, 400, 'quantity'],
      [{ quantity: 'two' }, 400, 'quantity'],
      [{ size: '1' }, 400, 'size'],
    ];
    for (const [body, status, field] of cases) {
      const res = await post(`/sandbox/orders/${order.id}/fill`, body);
      expect({ body, status: res.status, field: res.body.field }).toEqual({ body, status, field });
    }
    const notAnId = await post('/sandbox/orders/not-an-id/fill');
    expect(notAnId).toMatchObject({ status: 400, body: { field: 'orderId' } });
    expect(await getOrder(order.id)).toMatchObject({ status: 'NEW', filledQuantity: '0', fills: [] });
    expect((await post(`/sandbox/orders/${order.id}/expire`)).status).toBe(200);
  });

  it('a rejection with its reason gives the hold back; rejecting again is a 409', async () => {
    const before = await settledBalance();
    const order = await restingBuy('2');
    await until(balance, (b) => new Decimal(b.held).minus(before.held).eq(order.reservedAmount), 'the hold');
    const res = await post(`/sandbox/orders/${order.id}/reject`, { reason: 'Venue halted trading in AAPL' });
    expect(res.status).toBe(200);
    conforms('POST', '/sandbox/orders/{orderId}/reject', 200, res.body);
    expect(res.body).toMatchObject({ status: 'REJECTED', statusReason: 'Venue halted trading in AAPL', filledQuantity: '0' });
    expect(res.body.rejectedAt).toEqual(expect.any(String));
    await cashSettles(before, '0');
    expect((await balance()).availableToWithdraw).toBe(before.availableToWithdraw);
    expect(await post(`/sandbox/orders/${order.id}/reject`)).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
    expect(await post(`/sandbox/orders/${order.id}/fill`)).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
    const blank = await restingBuy('1');
    expect(await post(`/sandbox/orders/${blank.id}/reject`, { reason: '' })).toMatchObject({ status: 400, body: { field: 'reason' } });
    // No body: the sandbox's own reason.
    expect((await post(`/sandbox/orders/${blank.id}/reject`)).body).toMatchObject({
      status: 'REJECTED',
      statusReason: 'Rejected by the sandbox',
    });
  });

  it('an expiry closes the order as the end of its session does, after a partial fill too; its hold comes back', async () => {
    const before = await settledBalance();
    const heldBefore = await holding();
    const order = await restingBuy('5');
    expect((await post(`/sandbox/orders/${order.id}/fill`, { quantity: '1', price: '140.00' })).status).toBe(200);
    const res = await post(`/sandbox/orders/${order.id}/expire`);
    expect(res.status).toBe(200);
    conforms('POST', '/sandbox/orders/{orderId}/expire', 200, res.body);
    expect(res.body).toMatchObject({ status: 'EXPIRED', statusReason: 'GTC order expired at the end of the session', filledQuantity: '1' });
    // Only the one share's cost left the cash; the rest of the hold came back.
    await cashSettles(before, new Decimal('-140.00').minus(commissionOn('140.00')).toFixed(2));
    await until(holding, (q) => q.minus(heldBefore).eq(1), 'the fill booked in accounts');
    expect(await post(`/sandbox/orders/${order.id}/expire`)).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
  });

  it('a pending deposit fails: REJECTED with the reason, no cash moved', async () => {
    const before = await settledBalance();
    const deposit = await post('/banking/deposit', { accountId: aliceCash, amount: '250.00', currency: 'USD' });
    expect(deposit).toMatchObject({ status: 201, body: { state: 'PENDING' } });
    expect((await balance()).pendingIn).toBe(new Decimal(before.pendingIn).plus(250).toFixed(2));
    const res = await post(`/sandbox/funding/${deposit.body.id}/fail`, { reason: 'The bank returned the payment' });
    expect(res.status).toBe(200);
    conforms('POST', '/sandbox/funding/{transactionId}/fail', 200, res.body);
    expect(res.body).toMatchObject({ id: deposit.body.id, state: 'REJECTED', rejectReason: 'The bank returned the payment' });
    expect(res.body.rejectedAt).toEqual(expect.any(String));
    expect(await balance()).toEqual(before);
    // Clearing never completes it afterwards.
    await new Promise((r) => setTimeout(r, 3500));
    expect(await balance()).toEqual(before);
    expect(await post(`/sandbox/funding/${deposit.body.id}/fail`)).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
  });

  it("a pending withdrawal fails: REJECTED, and its held cash is the account's again", async () => {
    const before = await settledBalance();
    const withdrawal = await post('/banking/withdraw', { accountId: aliceCash, amount: '300.00', currency: 'USD' });
    expect(withdrawal).toMatchObject({ status: 201, body: { state: 'PENDING' } });
    const pending = await balance();
    expect(pending).toMatchObject({
      cash: before.cash,
      held: new Decimal(before.held).plus(300).toFixed(2),
      availableToWithdraw: new Decimal(before.availableToWithdraw).minus(300).toFixed(2),
      pendingOut: new Decimal(before.pendingOut).plus(300).toFixed(2),
    });
    const res = await post(`/sandbox/funding/${withdrawal.body.id}/fail`);
    expect(res).toMatchObject({ status: 200, body: { state: 'REJECTED', rejectReason: 'Rejected by the sandbox' } });
    expect(await balance()).toEqual(before);
    // In the ledger: the hold, then its release, each balanced, nothing paid out.
    const db = new ServiceDatabases(p);
    try {
      const entries = await db.query(
        'banking',
        `SELECT e.kind, sum(p.amount)::text AS net,
                sum(p.amount) FILTER (WHERE p.book = 'CUSTOMER_CASH')::text AS cash
           FROM journal_entries e JOIN postings p ON p.entry_id = e.id
          WHERE e.funding_transaction_id = $1 GROUP BY e.id, e.kind ORDER BY min(e.created_at), e.kind`,
        [withdrawal.body.id],
      );
      expect(entries.map((e) => [e.kind, new Decimal(e.net).toFixed(2), new Decimal(e.cash).toFixed(2)])).toEqual([
        ['WITHDRAWAL_HOLD', '0.00', '-300.00'],
        ['WITHDRAWAL_RELEASE', '0.00', '300.00'],
      ]);
    } finally {
      await db.end();
    }
  });

  it("another user's order or transfer is not found, and stays as it was", async () => {
    const order = await restingBuy('1');
    for (const action of ['fill', 'reject', 'expire'])
      expect(await post(`/sandbox/orders/${order.id}/${action}`, undefined, bobToken)).toMatchObject({
        status: 404,
        body: { code: 'NOT_FOUND', field: 'orderId' },
      });
    const deposit = await post('/banking/deposit', { accountId: aliceCash, amount: '5.00', currency: 'USD' });
    expect(await post(`/sandbox/funding/${deposit.body.id}/fail`, undefined, bobToken)).toMatchObject({
      status: 404,
      body: { code: 'NOT_FOUND', field: 'transactionId' },
    });
    expect(await getOrder(order.id)).toMatchObject({ status: 'NEW', fills: [] });
    expect((await post(`/sandbox/funding/${deposit.body.id}/fail`)).body.state).toBe('REJECTED');
  });

  it('a token from a PROD auth deployment is refused 403 naming PROD, at the facade and at the gateway alike', async () => {
    const prodAuth = await extraAuth(p, { APP_ENV: 'PROD', SMTP_URL: 'smtp://127.0.0.1:9' });
    try {
      // Alice's PAT, logged in at the PROD deployment: its session token is PROD's.
      const user = (await p.auth.users.findByEmail(alice.email))!;
      const { token: pat } = await p.auth.pats.create({ userId: user.id, name: 'prod', access: 'READ_WRITE', expires: inDays(7) });
      const login = await prodAuth.app.pats.login(pat, undefined);
      if (!login.ok) throw new Error(`PAT login at PROD answered ${login.reason}`);
      const prodToken = login.session.token;
      expect(decodeJwt(prodToken)['env']).toBe('PROD');
      // The token is good for everything else.
      expect((await http('GET', api(`/banking/${aliceCash}/balance/USD`), { token: prodToken })).status).toBe(200);

      const order = await restingBuy('1');
      const deposit = await post('/banking/deposit', { accountId: aliceCash, amount: '7.00', currency: 'USD' });
      const refusal = { status: 403, body: { code: 'FORBIDDEN', detail: 'The sandbox takes DEV tokens; this token is from PROD' } };
      for (const action of ['fill', 'reject', 'expire'])
        expect(await post(`/sandbox/orders/${order.id}/${action}`, undefined, prodToken)).toMatchObject(refusal);
      expect(await post(`/sandbox/funding/${deposit.body.id}/fail`, undefined, prodToken)).toMatchObject(refusal);
      // The subgraphs refuse it themselves: straight at the gateway too.
      for (const query of [
        `mutation { sandboxFillOrder(orderId: "${order.id}") { id } }`,
        `mutation { sandboxFailFundingTransaction(transactionId: "${deposit.body.id}") { id } }`,
      ]) {
        const res = await http('POST', p.urls.gateway, { token: prodToken, body: { query } });
        expect(res.body.errors?.[0]).toMatchObject({
          message: 'The sandbox takes DEV tokens; this token is from PROD',
          extensions: { code: 'FORBIDDEN' },
        });
      }
      expect(await getOrder(order.id)).toMatchObject({ status: 'NEW', fills: [] });
      expect((await post(`/sandbox/funding/${deposit.body.id}/fail`)).body.state).toBe('REJECTED');
      expect((await post(`/sandbox/orders/${order.id}/expire`)).body.status).toBe('EXPIRED');
    } finally {
      await prodAuth.close();
    }
  });
});
