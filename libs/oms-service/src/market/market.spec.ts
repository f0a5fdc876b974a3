import { createLogger } from '@trading/logging';
import type { RunningServer } from '@trading/service';
import type { SubgraphService } from '@trading/subgraph';
import { askSubgraph, startAccountsStandIn, startOnTestDatabase, testKeys, type ServiceOnTestDatabase } from '@trading/testing';
import { createOmsApp, loadOmsConfig, seedOmsDemo } from '../app';

describe('oms market: marks and FX rates for account valuation', () => {
  const keys = testKeys();
  const account = '0b7e9a10-5c3d-4e2f-8a61-2b9d7c4e1a01';
  let running: ServiceOnTestDatabase<SubgraphService>;
  let service: SubgraphService;
  let internal: RunningServer;
  const ask = (query: string, variables: Record<string, unknown>, scope?: string[]) =>
    askSubgraph(`${internal.url}/graphql`, { keys, subgraph: 'oms' }, query, { sub: 'u', ...(scope ? { scope } : {}) }, variables);
  const MARKET =
    'query($r: [_Any!]!) { _entities(representations: $r) { ... on Account { market { asOf prices { symbol currency lastPrice previousClose } fxRates { currency usdRate } } } } }';
  const PRICES = 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Position { accountId symbol lastPrice previousClose } } }';

  let accounts: Awaited<ReturnType<typeof startAccountsStandIn>>;

  beforeAll(async () => {
    accounts = await startAccountsStandIn(keys);
    accounts.own('u', account);
    running = await startOnTestDatabase('oms', (databaseUrl) =>
      createOmsApp(
        loadOmsConfig({ ...keys.env('oms'), OMS_DATABASE_URL: databaseUrl, OMS_PRICE_TICK_MS: '0', ACCOUNTS_URL: accounts.url }),
        { logger: createLogger('oms', 'silent') },
      ),
    );
    ({ service, internal } = running);
    await seedOmsDemo(service.dataSource, {
      instruments: [
        {
          symbol: 'AAPL',
          name: 'Apple Inc.',
          currency: 'USD',
          tickSize: '0.01',
          lotSize: '1',
          lastPrice: '189.84',
          previousClose: '187.40',
          tradable: true,
        },
        {
          symbol: 'SAP',
          name: 'SAP SE',
          currency: 'EUR',
          tickSize: '0.02',
          lotSize: '1',
          lastPrice: '183.60',
          previousClose: '182.14',
          tradable: true,
        },
      ],
      fxRates: [
        { currency: 'GBP', usdRate: '1.2671' },
        { currency: 'EUR', usdRate: '1.0823' },
      ],
    });
  });
  afterAll(async () => {
    await running?.stop();
    await accounts?.close();
  });

  it("serves every instrument's mark and every FX rate (USD is 1 by construction) as Account.market", async () => {
    const res = await ask(MARKET, { r: [{ __typename: 'Account', id: account }] });
    const [{ market }] = res.body.data._entities;
    expect(market.prices).toEqual([
      { symbol: 'AAPL', currency: 'USD', lastPrice: '189.84', previousClose: '187.40' },
      { symbol: 'SAP', currency: 'EUR', lastPrice: '183.60', previousClose: '182.14' },
    ]);
    expect(market.fxRates).toEqual([
      { currency: 'EUR', usdRate: '1.0823' },
      { currency: 'GBP', usdRate: '1.2671' },
      { currency: 'USD', usdRate: '1' },
    ]);
    expect(Math.abs(Date.parse(market.asOf) - Date.now())).toBeLessThan(60_000);
  });

  it('prices positions by symbol for the accounts subgraph, and refuses a USD rate other than 1', async () => {
    const res = await ask(PRICES, {
      r: [
        { __typename: 'Position', accountId: account, symbol: 'SAP' },
        { __typename: 'Position', accountId: account, symbol: 'AAPL' },
      ],
    });
    expect(res.body.data._entities).toEqual([
      { accountId: account, symbol: 'SAP', lastPrice: '183.60', previousClose: '182.14' },
      { accountId: account, symbol: 'AAPL', lastPrice: '189.84', previousClose: '187.40' },
    ]);
    await expect(service.dataSource.query("UPDATE fx_rates SET usd_rate = 2 WHERE currency = 'USD'")).rejects.toThrow(/check constraint/);
  });

  it('masks an unknown symbol as an internal error (a held instrument the market does not list is a bug)', async () => {
    const res = await ask(PRICES, { r: [{ __typename: 'Position', accountId: account, symbol: 'NOPE' }] });
    expect(res.body.errors[0].extensions.code).toBe('INTERNAL_SERVER_ERROR');
  });

  it('needs read:accounts for the market and position prices (read:orders is not enough)', async () => {
    for (const [query, r] of [
      [MARKET, [{ __typename: 'Account', id: account }]],
      [PRICES, [{ __typename: 'Position', accountId: account, symbol: 'SAP' }]],
    ] as const) {
      const res = await ask(query, { r }, ['read:orders']);
      expect(res.body.errors[0].extensions.code).toBe('INSUFFICIENT_SCOPE');
    }
  });
});
