import Decimal from 'decimal.js';
import { openApiDocument } from '@trading/rest-facade-service';
import { http, openApiResponseValidator } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '../demo-data';
import { patSession, scopedSession } from './sessions';
import { startTestPlatform, type TestPlatform } from './test-platform';

const conforms = openApiResponseValidator(openApiDocument);
const [alice] = DEMO_USERS as [(typeof DEMO_USERS)[0], (typeof DEMO_USERS)[0]];
const aliceMargin = DEMO_ACCOUNTS[1]!.id;
const bobCash = DEMO_ACCOUNTS[2]!.id;

/** Issue 5, accounts side, from outside over HTTP: every endpoint's happy path, auth, scope, ownership and bad input. */
describe('accounts REST endpoints', () => {
  let p: TestPlatform;
  let reader: string;
  let bankingOnly: string;

  beforeAll(async () => {
    p = await startTestPlatform();
    reader = await patSession(p, alice.email, 'READ_ONLY');
    bankingOnly = await scopedSession(p, alice.email, ['read:banking']);
  }, 60_000);
  afterAll(() => p?.stop());

  const endpoints = [
    { template: '/accounts/{accountId}/positions', path: (id: string) => `/accounts/${id}/positions` },
    { template: '/accounts/{accountId}/position', path: (id: string) => `/accounts/${id}/position?symbol=AAPL` },
    { template: '/accounts/{accountId}/margin', path: (id: string) => `/accounts/${id}/margin` },
    { template: '/accounts/{accountId}/portfolios', path: (id: string) => `/accounts/${id}/portfolios` },
  ];

  describe.each(endpoints)('GET $template', ({ template, path }) => {
    it('answers the owner with a body that matches the OpenAPI document', async () => {
      const res = await http('GET', p.urls.api + path(aliceMargin), { token: reader });
      expect(res.status).toBe(200);
      conforms('GET', template, 200, res.body);
    });
    it('refuses no token (401), a token without read:accounts (403), and hides other users’ accounts (404)', async () => {
      const none = await http('GET', p.urls.api + path(aliceMargin));
      expect(none.status).toBe(401);
      conforms('GET', template, 401, none.body);
      const scoped = await http('GET', p.urls.api + path(aliceMargin), { token: bankingOnly });
      expect(scoped).toMatchObject({ status: 403, body: { code: 'INSUFFICIENT_SCOPE' } });
      const other = await http('GET', p.urls.api + path(bobCash), { token: reader });
      expect(other).toMatchObject({ status: 404, body: { code: 'NOT_FOUND', field: 'accountId' } });
      const malformed = await http('GET', p.urls.api + path('not-an-id'), { token: reader });
      expect(malformed).toMatchObject({ status: 400, body: { field: 'accountId' } });
    });
  });

  it('pages positions with opaque cursors and refuses tampered cursors and bad limits', async () => {
    const first = await http('GET', `${p.urls.api}/accounts/${aliceMargin}/positions?limit=1`, { token: reader });
    expect(first.body.positions).toHaveLength(1);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await http(
      'GET',
      `${p.urls.api}/accounts/${aliceMargin}/positions?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`,
      { token: reader },
    );
    expect(second.body.positions[0].symbol > first.body.positions[0].symbol).toBe(true);
    const tampered = first.body.nextCursor.replace(/^./, (c: string) => (c === 'A' ? 'B' : 'A'));
    expect(
      await http('GET', `${p.urls.api}/accounts/${aliceMargin}/positions?cursor=${encodeURIComponent(tampered)}`, { token: reader }),
    ).toMatchObject({ status: 400, body: { field: 'cursor' } });
    for (const limit of ['0', '101', 'abc']) {
      expect(await http('GET', `${p.urls.api}/accounts/${aliceMargin}/positions?limit=${limit}`, { token: reader })).toMatchObject({
        status: 400,
        body: { field: 'limit' },
      });
    }
  });

  it('values a position exactly and answers 404 for a symbol not held, 400 without one', async () => {
    const aapl = await http('GET', `${p.urls.api}/accounts/${aliceMargin}/position?symbol=aapl`, { token: reader });
    expect(aapl.body).toMatchObject({ symbol: 'AAPL', quantity: '10' });
    expect(new Decimal(aapl.body.marketValue).equals(new Decimal(aapl.body.quantity).times(aapl.body.marketPrice))).toBe(true);
    expect(new Decimal(aapl.body.unrealizedPnl).equals(new Decimal(aapl.body.marketValue).minus(aapl.body.costBasis))).toBe(true);
    expect(await http('GET', `${p.urls.api}/accounts/${aliceMargin}/position?symbol=TSLA`, { token: reader })).toMatchObject({
      status: 404,
      body: { field: 'symbol' },
    });
    expect(await http('GET', `${p.urls.api}/accounts/${aliceMargin}/position`, { token: reader })).toMatchObject({
      status: 400,
      body: { field: 'symbol' },
    });
  });

  it('computes margin from positions and banking cash consistently', async () => {
    const { body } = await http('GET', `${p.urls.api}/accounts/${aliceMargin}/margin`, { token: reader });
    const t = body.total;
    expect(body).toMatchObject({ accountType: 'MARGIN', baseCurrency: 'USD' });
    expect(new Decimal(t.equity).equals(new Decimal(t.cash).plus(t.marketValue))).toBe(true);
    expect(new Decimal(t.excessLiquidity).equals(new Decimal(t.equity).minus(t.maintenanceRequirement))).toBe(true);
    expect(new Decimal(t.initialRequirement).gte(t.maintenanceRequirement)).toBe(true);
    expect(new Decimal(t.cash).equals('25000')).toBe(true);
  });

  it('summarises portfolios whose allocations add up to 100%', async () => {
    const { body } = await http('GET', `${p.urls.api}/accounts/${aliceMargin}/portfolios`, { token: reader });
    const total = body.portfolios.reduce((sum: Decimal, x: { allocationPercent: string }) => sum.plus(x.allocationPercent), new Decimal(0));
    expect(total.minus(100).abs().lte('0.05')).toBe(true);
  });

  it('answers one GraphQL query spanning accounts, banking and oms', async () => {
    const res = await http('POST', p.urls.gateway, {
      token: reader,
      body: {
        query: `{ account(id: "${aliceMargin}") { number positions { nodes { symbol marketValue } } balances { currency cash availableToWithdraw } margin { total { buyingPower } } orders { nodes { id } } } }`,
      },
    });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.account).toMatchObject({ number: 'DU1000002', orders: { nodes: [] } });
    expect(res.body.data.account.positions.nodes.length).toBeGreaterThan(0);
    expect(res.body.data.account.balances[0]).toMatchObject({ currency: 'USD' });
  });
});
