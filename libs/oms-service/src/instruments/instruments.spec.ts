import { createLogger } from '@trading/logging';
import type { RunningServer } from '@trading/service';
import type { SubgraphService } from '@trading/subgraph';
import { askSubgraph, startAccountsStandIn, startOnTestDatabase, testKeys, type ServiceOnTestDatabase } from '@trading/testing';
import { createOmsApp, loadOmsConfig, seedOmsDemo } from '../app';

describe('oms instruments and orders', () => {
  const keys = testKeys();
  let running: ServiceOnTestDatabase<SubgraphService>;
  let service: SubgraphService;
  let internal: RunningServer;
  let accounts: Awaited<ReturnType<typeof startAccountsStandIn>>;
  const ALICE_ACCOUNT = '0b7e9a10-5c3d-4e2f-8a61-2b9d7c4e1a01';

  beforeAll(async () => {
    accounts = await startAccountsStandIn(keys);
    accounts.own('u', ALICE_ACCOUNT);
    running = await startOnTestDatabase('oms', (databaseUrl) =>
      createOmsApp(
        loadOmsConfig({ ...keys.env('oms'), OMS_DATABASE_URL: databaseUrl, OMS_PRICE_TICK_MS: '0', ACCOUNTS_URL: accounts.url }),
        { logger: createLogger('oms', 'silent') },
      ),
    );
    ({ service, internal } = running);
    const instrument = {
      symbol: 'VOD',
      name: 'Vodafone',
      currency: 'GBP',
      tickSize: '0.0002',
      lotSize: '1',
      lastPrice: '0.7124',
      previousClose: '0.7138',
      tradable: true,
    };
    await seedOmsDemo(service.dataSource, { instruments: [instrument] });
    await seedOmsDemo(service.dataSource, { instruments: [{ ...instrument, lastPrice: '9' }] }); // a second start changes nothing
  });
  afterAll(async () => {
    await running?.stop();
    await accounts?.close();
  });

  it('lists instruments with exact decimal prices and tick sizes', async () => {
    const res = await askSubgraph(
      `${internal.url}/graphql`,
      { keys, subgraph: 'oms' },
      '{ instruments { symbol currency tickSize lastPrice previousClose } }',
      { sub: 'u' },
    );
    expect(res.body.data.instruments).toEqual([
      { symbol: 'VOD', currency: 'GBP', tickSize: '0.0002', lastPrice: '0.7124', previousClose: '0.7138' },
    ]);
  });

  it('extends Account with its orders and needs read:orders', async () => {
    const query = 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Account { orders { nodes { id } nextCursor } } } }';
    const r = [{ __typename: 'Account', id: ALICE_ACCOUNT }];
    expect(
      (await askSubgraph(`${internal.url}/graphql`, { keys, subgraph: 'oms' }, query, { sub: 'u' }, { r })).body.data._entities,
    ).toEqual([{ orders: { nodes: [], nextCursor: null } }]);
    const denied = await askSubgraph(
      `${internal.url}/graphql`,
      { keys, subgraph: 'oms' },
      query,
      { sub: 'u', scope: ['read:accounts'] },
      { r },
    );
    expect(denied.body.errors[0].extensions.code).toBe('INSUFFICIENT_SCOPE');
  });

  it("attack: another user's representation of an account resolves to null through _entities", async () => {
    const query =
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on Account { orders { nodes { id } } trades { nodes { id } } orderRules { accountId } } } }';
    const r = [{ __typename: 'Account', id: ALICE_ACCOUNT }];
    const res = await askSubgraph(`${internal.url}/graphql`, { keys, subgraph: 'oms' }, query, { sub: 'mallory' }, { r });
    expect(res.body.data._entities).toEqual([null]);
  });
});
