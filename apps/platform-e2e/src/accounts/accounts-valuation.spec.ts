import Decimal from 'decimal.js';
import { http } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { scopedSession } from '../support/sessions';
import { inDays, startTestPlatform, type TestPlatform } from '../support/test-platform';

const [alice] = DEMO_USERS as [(typeof DEMO_USERS)[0]];
const marginAccount = DEMO_ACCOUNTS[1]!; // alice, MARGIN, USD: 10 AAPL @ 172.35, 5 MSFT @ 402.10
const bobAccount = DEMO_ACCOUNTS[2]!;

/**
 * Valuation across subgraphs in one gateway query: positions (accounts) priced with oms marks,
 * margin and portfolios computed in accounts from banking's cash and the oms market (@requires).
 */
describe('account valuation through the gateway', () => {
  let p: TestPlatform;
  let token: string;

  beforeAll(async () => {
    // The seed's marks, held still: the expected figures are computed from them.
    p = await startTestPlatform({}, { oms: { OMS_PRICE_TICK_MS: '0' } });
    const pat = await http('POST', `${p.urls.adminApi}/admin/pats`, {
      token: p.adminToken,
      body: { email: alice.email, name: 'valuation e2e', scope: 'READ_ONLY', expires: inDays(5) },
    });
    expect(pat.status).toBe(201);
    const login = await http('POST', `${p.urls.api}/pat/login`, { body: { token: pat.body.token } });
    expect(login.status).toBe(200);
    token = login.body.token;
  }, 60_000);
  afterAll(() => p?.stop());

  const QUERY = `query($id: ID!) { account(id: $id) {
    balances { currency cash availableToTrade }
    positions { nodes { symbol marketPrice marketValue unrealizedPnl dayChange } nextCursor }
    margin { baseCurrency total { cash marketValue equity initialRequirement maintenanceRequirement excessLiquidity buyingPower } byCurrency { currency } }
    portfolios { baseCurrency totalValue dayChange portfolios { currency marketValue allocationPercent dayChange positionCount } }
  } }`;

  it('values positions, margin and portfolios in one query', async () => {
    const res = await http('POST', p.urls.gateway, { token, body: { query: QUERY, variables: { id: marginAccount.id } } });
    expect(res.body.errors).toBeUndefined();
    const account = res.body.data.account;
    expect(account.positions).toEqual({
      nodes: [
        // 10 × 189.84; 10 × (189.84 − 172.35); 10 × (189.84 − 187.44)
        { symbol: 'AAPL', marketPrice: '189.84', marketValue: '1898.40', unrealizedPnl: '174.90', dayChange: '24.00' },
        // 5 × 415.26; 5 × (415.26 − 402.10); 5 × (415.26 − 417.02)
        { symbol: 'MSFT', marketPrice: '415.26', marketValue: '2076.30', unrealizedPnl: '65.80', dayChange: '-8.80' },
      ],
      nextCursor: null,
    });
    const cash = new Decimal(account.balances.find((b: { currency: string }) => b.currency === 'USD').cash);
    const equity = cash.plus('3974.70');
    expect(account.margin).toEqual({
      baseCurrency: 'USD',
      total: {
        cash: cash.toFixed(2),
        marketValue: '3974.70',
        equity: equity.toFixed(2),
        initialRequirement: '1987.35', // 50%
        maintenanceRequirement: '993.68', // 25% = 993.675, half-up
        excessLiquidity: equity.minus('993.68').toFixed(2), // from the shown figures, so they add up
        buyingPower: Decimal.max(0, equity.minus('1987.35')).times(2).toFixed(2),
      },
      byCurrency: [{ currency: 'USD' }],
    });
    expect(account.portfolios).toEqual({
      baseCurrency: 'USD',
      totalValue: equity.toFixed(2),
      dayChange: '15.20',
      portfolios: [{ currency: 'USD', marketValue: '3974.70', allocationPercent: '100.00', dayChange: '15.20', positionCount: 2 }],
    });
  });

  it('keeps the fields subgraphs exchange among themselves out of the public schema (@inaccessible)', async () => {
    for (const field of ['market { asOf }', 'cashForValuation { cash }', 'positionSettlement(symbol: "AAPL") { quantity }']) {
      const res = await http('POST', p.urls.gateway, {
        token,
        body: { query: `query($id: ID!) { account(id: $id) { ${field} } }`, variables: { id: marginAccount.id } },
      });
      expect({ field, code: res.body.errors?.[0]?.extensions?.code }).toEqual({ field, code: 'GRAPHQL_VALIDATION_FAILED' });
    }
  });

  it("gives nothing of another user's account: null in GraphQL, 404 through REST", async () => {
    const res = await http('POST', p.urls.gateway, { token, body: { query: QUERY, variables: { id: bobAccount.id } } });
    expect(res.body).toEqual({ data: { account: null } });
    for (const path of ['margin', 'portfolios', 'positions', 'position?symbol=SAP']) {
      const rest = await http('GET', `${p.urls.api}/accounts/${bobAccount.id}/${path}`, { token });
      expect(rest).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
    }
  });

  it('serves margin and portfolios to a token with exactly their documented scope (read:accounts), and nothing of banking beyond them', async () => {
    const accountsOnly = await scopedSession(p, alice.email, ['read:accounts']);
    for (const path of ['margin', 'portfolios', 'positions']) {
      expect([path, (await http('GET', `${p.urls.api}/accounts/${marginAccount.id}/${path}`, { token: accountsOnly })).status]).toEqual([
        path,
        200,
      ]);
    }
    expect((await http('GET', `${p.urls.api}/banking/${marginAccount.id}/balance`, { token: accountsOnly })).status).toBe(403);
    const direct = await http('POST', p.urls.gateway, {
      token: accountsOnly,
      body: { query: 'query($id: ID!) { account(id: $id) { balances { cash } } }', variables: { id: marginAccount.id } },
    });
    expect(direct.body.errors[0].extensions.code).toBe('INSUFFICIENT_SCOPE');
    // Each read endpoint with exactly the one scope it documents.
    const bankingOnly = await scopedSession(p, alice.email, ['read:banking']);
    const ordersOnly = await scopedSession(p, alice.email, ['read:orders']);
    for (const [token, path] of [
      [bankingOnly, `/banking/${marginAccount.id}/balance`],
      [bankingOnly, `/banking/${marginAccount.id}/txn-activity`],
      [ordersOnly, `/oms/${marginAccount.id}/orders`],
      [ordersOnly, `/oms/${marginAccount.id}/order/rules`],
      [accountsOnly, '/accounts'],
    ] as const) {
      expect([path, (await http('GET', `${p.urls.api}${path}`, { token })).status]).toEqual([path, 200]);
    }
  });
});
