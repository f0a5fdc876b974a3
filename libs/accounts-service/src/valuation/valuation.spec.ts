import { randomUUID } from 'node:crypto';
import { createLogger } from '@trading/logging';
import type { RunningServer } from '@trading/service';
import type { SubgraphService } from '@trading/subgraph';
import { askSubgraph, startOnTestDatabase, testKeys, type ServiceOnTestDatabase } from '@trading/testing';
import { createAccountsApp, loadAccountsConfig, seedAccountsDemo } from '../app';

/** margin and portfolios through the subgraph, with the representation the gateway sends after fetching balances (banking) and market (oms). */
describe('margin and portfolios', () => {
  const keys = testKeys();
  const alice = randomUUID();
  const bob = randomUUID();
  const cashAccount = randomUUID();
  const marginAccount = randomUUID();
  const bobAccount = randomUUID();
  let running: ServiceOnTestDatabase<SubgraphService>;
  let service: SubgraphService;
  let internal: RunningServer;
  const market = {
    prices: [
      { symbol: 'AAPL', currency: 'USD', lastPrice: '0.1', previousClose: '0.09' },
      { symbol: 'SAP', currency: 'EUR', lastPrice: '200', previousClose: '198' },
    ],
    fxRates: [
      { currency: 'EUR', usdRate: '1.1' },
      { currency: 'USD', usdRate: '1' },
    ],
  };
  const representation = (id: string, cashForValuation: Array<{ currency: string; cash: string; availableToTrade: string }>) => ({
    __typename: 'Account',
    id,
    cashForValuation,
    market,
  });
  const QUERY = `query($r: [_Any!]!) { _entities(representations: $r) { ... on Account {
    margin { baseCurrency asOf total { currency cash marketValue equity initialRequirement maintenanceRequirement excessLiquidity buyingPower }
             byCurrency { currency equity buyingPower } }
    portfolios { baseCurrency totalValue dayChange dayChangePercent asOf portfolios { currency totalValueInBase allocationPercent dayChange positionCount } } } } }`;
  const ask = (r: unknown[], claims: { sub: string; scope?: string[] } = { sub: alice }) =>
    askSubgraph(`${internal.url}/graphql`, { keys, subgraph: 'accounts' }, QUERY, claims, { r });

  beforeAll(async () => {
    running = await startOnTestDatabase('accounts', (databaseUrl) =>
      createAccountsApp(loadAccountsConfig({ ...keys.env('accounts'), ACCOUNTS_DATABASE_URL: databaseUrl }), {
        logger: createLogger('accounts', 'silent'),
      }),
    );
    ({ service, internal } = running);
    await seedAccountsDemo(service.dataSource, {
      accounts: [
        { id: cashAccount, userId: alice, number: `T-${cashAccount.slice(0, 8)}`, type: 'CASH', baseCurrency: 'USD' },
        { id: marginAccount, userId: alice, number: `T-${marginAccount.slice(0, 8)}`, type: 'MARGIN', baseCurrency: 'USD' },
        { id: bobAccount, userId: bob, number: `T-${bobAccount.slice(0, 8)}`, type: 'MARGIN', baseCurrency: 'EUR' },
      ],
      positions: [
        { accountId: cashAccount, symbol: 'AAPL', quantity: '3', averageCost: '0.1', currency: 'USD' },
        { accountId: marginAccount, symbol: 'SAP', quantity: '10', averageCost: '150', currency: 'EUR' },
        { accountId: bobAccount, symbol: 'SAP', quantity: '1', averageCost: '150', currency: 'EUR' },
      ],
    });
  });
  afterAll(async () => {
    await running?.stop();
  });

  it('computes a CASH account from its positions, banking cash and the marks', async () => {
    const res = await ask([representation(cashAccount, [{ currency: 'USD', cash: '1000.10', availableToTrade: '900.10' }])]);
    expect(res.body.errors).toBeUndefined();
    const [{ margin, portfolios }] = res.body.data._entities;
    expect(margin).toMatchObject({
      baseCurrency: 'USD',
      total: {
        currency: 'USD',
        cash: '1000.10',
        marketValue: '0.30',
        equity: '1000.40',
        initialRequirement: '0.30',
        maintenanceRequirement: '0.30',
        excessLiquidity: '1000.10',
        buyingPower: '900.10',
      },
      byCurrency: [{ currency: 'USD', equity: '1000.40', buyingPower: '900.10' }],
    });
    expect(margin.asOf).toMatch(/Z$/);
    expect(portfolios).toMatchObject({
      baseCurrency: 'USD',
      totalValue: '1000.40',
      dayChange: '0.03',
      portfolios: [{ currency: 'USD', totalValueInBase: '1000.40', allocationPercent: '100.00', dayChange: '0.03', positionCount: 1 }],
    });
  });

  it('computes a multi-currency MARGIN account per currency and in the base currency', async () => {
    const res = await ask([
      representation(marginAccount, [
        { currency: 'EUR', cash: '-500', availableToTrade: '-500' },
        { currency: 'USD', cash: '1000', availableToTrade: '1000' },
      ]),
    ]);
    const [{ margin, portfolios }] = res.body.data._entities;
    expect(margin.total).toEqual({
      currency: 'USD',
      cash: '450.00',
      marketValue: '2200.00',
      equity: '2650.00',
      initialRequirement: '1100.00',
      maintenanceRequirement: '550.00',
      excessLiquidity: '2100.00',
      buyingPower: '3100.00',
    });
    expect(margin.byCurrency).toEqual([
      { currency: 'EUR', equity: '1500.00', buyingPower: '1000.00' },
      { currency: 'USD', equity: '1000.00', buyingPower: '2000.00' },
    ]);
    // 1650 USD + 1000 USD = 2650; day change 10 × 2 EUR = 22 USD, against 2628.
    expect(portfolios).toMatchObject({
      totalValue: '2650.00',
      dayChange: '22.00',
      dayChangePercent: '0.84',
      portfolios: [
        { currency: 'EUR', totalValueInBase: '1650.00', allocationPercent: '62.26', dayChange: '20.00', positionCount: 1 },
        { currency: 'USD', totalValueInBase: '1000.00', allocationPercent: '37.74', dayChange: '0.00', positionCount: 0 },
      ],
    });
  });

  it("never values another user's account, and needs read:accounts", async () => {
    const res = await ask([
      representation(bobAccount, [{ currency: 'EUR', cash: '1', availableToTrade: '1' }]),
      representation(cashAccount, []),
    ]);
    expect(res.body.data._entities).toEqual([null, expect.objectContaining({ margin: expect.objectContaining({ baseCurrency: 'USD' }) })]);
    const denied = await ask([representation(cashAccount, [])], { sub: alice, scope: ['read:banking', 'read:orders'] });
    expect(denied.body.errors[0].extensions.code).toBe('INSUFFICIENT_SCOPE');
  });

  it('masks a valuation it cannot do (no FX rate for a currency) as an internal error, never a wrong figure', async () => {
    const res = await ask([representation(cashAccount, [{ currency: 'CHF', cash: '1', availableToTrade: '1' }])]);
    expect(res.body.errors[0]).toMatchObject({ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  });
});
