import { openApiDocument } from '@trading/rest-facade-service';
import { http, openApiResponseValidator } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { fund, startOrdersPlatform, until } from '../support/orders-platform';
import { patSession, scopedSession } from '../support/sessions';
import type { TestPlatform } from '../support/test-platform';

const conforms = openApiResponseValidator(openApiDocument);
const [alice] = DEMO_USERS as [(typeof DEMO_USERS)[0]];
const aliceCash = DEMO_ACCOUNTS[0]!.id;
const bobCash = DEMO_ACCOUNTS[2]!.id;

type Item = { id: string; type: string; occurredAt: string } & Record<string, unknown>;

/** The account activity feed over HTTP against the whole platform: fills and cash movements in one list. */
describe('GET /accounts/{accountId}/activities', () => {
  let p: TestPlatform;
  let writer: string;
  let reader: string;
  let withoutBanking: string;
  let depositId: string;
  let withdrawalId: string;
  const orderIds: string[] = [];
  const api = (path: string) => p.urls.api + path;
  const feed = (query = '', token = reader) => http('GET', api(`/accounts/${aliceCash}/activities${query}`), { token });

  beforeAll(async () => {
    p = await startOrdersPlatform();
    writer = await patSession(p, alice.email, 'READ_WRITE');
    reader = await patSession(p, alice.email, 'READ_ONLY');
    withoutBanking = await scopedSession(p, alice.email, ['read:accounts', 'read:orders']);
    await fund(p, writer, aliceCash, '500.00');
    depositId = (await http('GET', api(`/banking/${aliceCash}/txn-activity?type=DEPOSIT&limit=1`), { token: reader })).body.transactions[0]
      .id;
    const withdrawal = await http('POST', api('/banking/withdraw'), {
      token: writer,
      body: { accountId: aliceCash, amount: '40.25', currency: 'USD', sandboxOutcome: 'COMPLETED' },
    });
    expect(withdrawal.status).toBe(201);
    withdrawalId = withdrawal.body.id;
    await until(
      () => http('GET', api(`/banking/${aliceCash}/activity?type=WITHDRAWAL&limit=1`), { token: reader }),
      (r) => r.body.activity?.[0]?.transactionId === withdrawalId,
      'the withdrawal to be paid out',
    );
    for (const clientOrderId of ['activities-1', 'activities-2']) {
      const placed = await http('POST', api('/oms/order'), {
        token: writer,
        body: { accountId: aliceCash, symbol: 'AAPL', side: 'BUY', type: 'MARKET', timeInForce: 'DAY', quantity: '1', clientOrderId },
      });
      expect(placed.status).toBe(201);
      orderIds.push(placed.body.id);
      await until(
        () => http('GET', api(`/oms/${aliceCash}/order/${placed.body.id}`), { token: reader }),
        (r) => r.body.status === 'FILLED',
        'the order to fill',
      );
    }
    // Banking books each fill's cash leg from the OMS's event: wait for both, so the feed is settled.
    await until(
      () => http('GET', api(`/banking/${aliceCash}/activity?type=TRADE`), { token: reader }),
      (r) => r.body.activity?.length === 2,
      "both fills' cash legs",
    );
  }, 90_000);
  afterAll(() => p?.stop());

  it('lists deposits, withdrawals, fills and their fees newest first, each fill once', async () => {
    const res = await feed('?limit=100');
    expect(res.status).toBe(200);
    conforms('GET', '/accounts/{accountId}/activities', 200, res.body);
    expect(res.body).toMatchObject({ accountId: aliceCash, nextPageToken: null });
    const items: Item[] = res.body.activities;
    const times = items.map((a) => Date.parse(a.occurredAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));

    const trades = (await http('GET', api(`/oms/${aliceCash}/trades`), { token: reader })).body.trades;
    expect(trades).toHaveLength(2);
    const fills = items.filter((a) => a.type === 'FILL');
    expect(fills.map((f) => f.id).sort()).toEqual(trades.map((t: { id: string }) => t.id).sort());
    for (const trade of trades)
      expect(fills.find((f) => f.id === trade.id)).toEqual({
        id: trade.id,
        type: 'FILL',
        occurredAt: trade.executedAt,
        orderId: trade.orderId,
        symbol: 'AAPL',
        side: 'BUY',
        quantity: '1',
        price: trade.price,
        grossAmount: trade.grossAmount,
        commission: trade.commission,
        currency: 'USD',
      });
    expect(fills.map((f) => f.orderId).sort()).toEqual([...orderIds].sort());

    // The cash legs of the fills are the fills themselves: not listed again.
    expect(items.map((a) => a.type).filter((t) => !['FILL', 'DEPOSIT', 'WITHDRAWAL', 'FEE'].includes(t))).toEqual([]);
    expect(items.find((a) => a.type === 'DEPOSIT' && a.transactionId === depositId)).toMatchObject({
      amount: '500.00',
      currency: 'USD',
      description: expect.any(String),
    });
    expect(items.find((a) => a.type === 'WITHDRAWAL' && a.transactionId === withdrawalId)).toMatchObject({
      amount: '-40.25',
      currency: 'USD',
    });
    // Every commission is its own cash movement, a FEE of minus the fill's commission.
    const fees = items.filter((a) => a.type === 'FEE');
    expect(fees).toHaveLength(2);
    expect(fees.map((f) => f.amount).sort()).toEqual(trades.map((t: { commission: string }) => `-${t.commission}`).sort());
    expect(fees.every((f) => f.transactionId === null)).toBe(true);

    // The same cash movements as banking's own list, less the fills' cash legs.
    const cash = (await http('GET', api(`/banking/${aliceCash}/activity?limit=100`), { token: reader })).body.activity;
    const nonTrade = cash.filter((c: { type: string }) => c.type !== 'TRADE').map((c: { id: string }) => c.id);
    expect(
      items
        .filter((a) => a.type !== 'FILL')
        .map((a) => a.id)
        .sort(),
    ).toEqual(nonTrade.sort());
  });

  it('pages one item at a time through the whole feed, each exactly once and in order, ending without a token', async () => {
    const all: Item[] = (await feed('?limit=100')).body.activities;
    expect(all.length).toBeGreaterThanOrEqual(5);
    const walked: Item[] = [];
    let token: string | null = null;
    for (let page = 0; page <= all.length; page++) {
      const res = await feed(`?limit=1${token ? `&pageToken=${token}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.activities).toHaveLength(1);
      walked.push(...res.body.activities);
      token = res.body.nextPageToken;
      if (!token) break;
    }
    expect(token).toBeNull();
    expect(walked.map((a) => `${a.type} ${a.id}`)).toEqual(all.map((a) => `${a.type} ${a.id}`));
    // The default page is 20 items: all of these, and no token.
    expect((await feed()).body).toMatchObject({ activities: all, nextPageToken: null });
  });

  it('lists only the types asked for', async () => {
    const fills = await feed('?types=FILL');
    expect(fills.status).toBe(200);
    expect(fills.body.activities.map((a: Item) => a.type)).toEqual(['FILL', 'FILL']);
    const funding = (await feed('?types=DEPOSIT,WITHDRAWAL')).body.activities.map((a: Item) => a.transactionId);
    expect(funding).toEqual(expect.arrayContaining([depositId, withdrawalId]));
    expect((await feed('?types=DEPOSIT,WITHDRAWAL')).body.activities.every((a: Item) => ['DEPOSIT', 'WITHDRAWAL'].includes(a.type))).toBe(
      true,
    );
  });

  it('refuses a bad page token, an unknown type and a parameter it does not take with a 400 naming it', async () => {
    const forged = Buffer.from(JSON.stringify({ t: 'yesterday', k: 'FILL', i: orderIds[0] })).toString('base64url');
    for (const [query, field] of [
      ['?pageToken=nonsense', 'pageToken'],
      [`?pageToken=${forged}`, 'pageToken'],
      ['?types=TRADE', 'types'],
      ['?types=FILL,BOGUS', 'types'],
      ['?limit=0', 'limit'],
      ['?cursor=abc', 'cursor'],
    ] as const) {
      const res = await feed(query);
      expect({ query, status: res.status, code: res.body.code, field: res.body.field }).toEqual({
        query,
        status: 400,
        code: 'BAD_USER_INPUT',
        field,
      });
    }
  });

  it("answers another user's account as not found, and a token without read:banking with a 403 naming the scopes", async () => {
    expect(await http('GET', api(`/accounts/${bobCash}/activities`), { token: reader })).toMatchObject({
      status: 404,
      body: { code: 'NOT_FOUND', field: 'accountId' },
    });
    const refused = await feed('', withoutBanking);
    expect(refused).toMatchObject({ status: 403, body: { code: 'INSUFFICIENT_SCOPE' } });
    expect(refused.body.detail).toMatch(/read:banking/);
    expect((await feed('')).status).toBe(200);
    expect((await http('GET', api(`/accounts/${aliceCash}/activities`))).status).toBe(401);
  });
});
