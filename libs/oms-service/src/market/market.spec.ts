import { createLogger } from '@trading/logging';
import type { RunningServer } from '@trading/service';
import { askSubgraph, startAccountsStandIn, startOnTestDatabase, testKeys, type ServiceOnTestDatabase } from '@trading/testing';
import { createOmsApp, loadOmsConfig, seedOmsDemo, type OmsApp } from '../app';
import { draw, nextPrice } from './price-feed';

describe('oms market: marks and FX rates for account valuation', () => {
  const keys = testKeys();
  const account = '0b7e9a10-5c3d-4e2f-8a61-2b9d7c4e1a01';
  let running: ServiceOnTestDatabase<OmsApp>;
  let service: OmsApp;
  let internal: RunningServer;
  const ask = (query: string, variables: Record<string, unknown>, scope?: string[]) =>
    askSubgraph(`${internal.url}/graphql`, { keys, subgraph: 'oms' }, query, { sub: 'u', ...(scope ? { scope } : {}) }, variables);
  const MARKET =
    'query($r: [_Any!]!) { _entities(representations: $r) { ... on Account { market { asOf prices { symbol currency lastPrice previousClose } fxRates { currency usdRate } } } } }';
  const PRICES = 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Position { accountId symbol lastPrice previousClose } } }';

  let accounts: Awaited<ReturnType<typeof startAccountsStandIn>>;
  let config: ReturnType<typeof loadOmsConfig>;

  beforeAll(async () => {
    accounts = await startAccountsStandIn(keys);
    accounts.own('u', account);
    running = await startOnTestDatabase('oms', (databaseUrl) =>
      createOmsApp(
        (config = loadOmsConfig({ ...keys.env('oms'), OMS_DATABASE_URL: databaseUrl, OMS_PRICE_TICK_MS: '0', ACCOUNTS_URL: accounts.url })),
        {
          logger: createLogger('oms', 'silent'),
        },
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

  it('a price step moves every tradable instrument on the shared clock and keeps each price as a tick', async () => {
    const ds = service.dataSource;
    const prices = async () =>
      Object.fromEntries(
        (
          (await ds.query('SELECT symbol, trim_scale(last_price)::text AS price FROM instruments ORDER BY symbol')) as Array<{
            symbol: string;
            price: string;
          }>
        ).map((r) => [r.symbol, r.price]),
      );
    const before = await prices();
    const [{ step: last }] = await ds.query('SELECT step::int AS step FROM market_clock');
    expect(await service.feed.step()).toBe(last + 1);
    const next = (symbol: string, tick: string) =>
      nextPrice(before[symbol]!, tick, draw(config.OMS_PRICE_SEED, symbol, last + 1), config.OMS_PRICE_VOLATILITY);
    expect(await prices()).toEqual({ AAPL: next('AAPL', '0.01'), SAP: next('SAP', '0.02') });
    const ticks = await ds.query(
      'SELECT t.symbol, trim_scale(t.price)::text AS price FROM market_ticks t JOIN instruments i ON i.symbol = t.symbol AND t.at = i.price_at ORDER BY t.symbol',
    );
    expect(ticks).toEqual([
      { symbol: 'AAPL', price: next('AAPL', '0.01') },
      { symbol: 'SAP', price: next('SAP', '0.02') },
    ]);
  });

  it('a price step never holds up a new order on the instruments it reprices', async () => {
    const ds = service.dataSource;
    // Another session holds the tick table, so the step stops after it has locked and repriced
    // the instruments and before it commits: the window every order placed meanwhile meets.
    const holder = ds.createQueryRunner();
    await holder.startTransaction();
    await holder.query('LOCK TABLE market_ticks IN EXCLUSIVE MODE');
    const step = service.feed.step();
    try {
      const stepWaits = async () =>
        (
          await ds.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO market_ticks%'",
          )
        )[0].n === 1;
      for (let i = 0; !(await stepWaits()); i++) {
        if (i > 100) throw new Error('the price step never reached its tick insert');
        await new Promise((r) => setTimeout(r, 20));
      }
      // An order's insert checks its instrument through the foreign key (KEY SHARE on the row).
      const order = ds.createQueryRunner();
      await order.startTransaction();
      try {
        await order.query("SET LOCAL lock_timeout = '2s'");
        const [row] = await order.query(
          `INSERT INTO orders (account_id, client_order_id, symbol, side, type, time_in_force, quantity, limit_price, status)
           VALUES ($1, 'placed-during-a-price-step', 'AAPL', 'SELL', 'LIMIT', 'DAY', 1, 100, 'NEW') RETURNING symbol`,
          [account],
        );
        expect(row).toEqual({ symbol: 'AAPL' });
      } finally {
        await order.rollbackTransaction();
        await order.release();
      }
    } finally {
      await holder.rollbackTransaction();
      await holder.release();
      await step;
    }
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
