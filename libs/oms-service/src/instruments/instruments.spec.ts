import { createLogger } from '@trading/logging';
import type { RunningServer } from '@trading/service';
import { askSubgraph, startAccountsStandIn, startOnTestDatabase, testKeys, type ServiceOnTestDatabase } from '@trading/testing';
import { Client } from 'pg';
import { createOmsApp, loadOmsConfig, seedOmsDemo, type OmsApp } from '../app';

describe('oms instruments and orders', () => {
  const keys = testKeys();
  let running: ServiceOnTestDatabase<OmsApp>;
  let service: OmsApp;
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

  describe('instruments remembered between orders', () => {
    const instrument = async (symbol: string) =>
      (
        await askSubgraph(
          `${internal.url}/graphql`,
          { keys, subgraph: 'oms' },
          'query($s: String!) { marketInstrument(symbol: $s) { lastPrice tradable } }',
          { sub: 'u' },
          { s: symbol },
        )
      ).body;
    /** Another session's change; `unannounced` keeps the trigger from firing (as a change nobody announces). */
    const elsewhere = async (sql: string, unannounced = false) => {
      const db = new Client({ connectionString: running.databaseUrl });
      await db.connect();
      try {
        await db.query('BEGIN');
        if (unannounced) await db.query('SET LOCAL session_replication_role = replica');
        await db.query(sql);
        await db.query('COMMIT');
      } finally {
        await db.end();
      }
    };
    const until = async (check: () => Promise<boolean>) => {
      for (let i = 0; i < 100 && !(await check()); i++) await new Promise((r) => setTimeout(r, 50));
      return check();
    };

    beforeAll(async () => {
      expect(await until(async () => service.instruments.serving)).toBe(true);
      // Listed unannounced: a notification still in flight when the first read loads would keep that read from being remembered.
      await elsewhere(
        "INSERT INTO instruments (symbol, name, currency, tick_size, lot_size, last_price, previous_close, tradable) VALUES ('MEM', 'Memo', 'USD', 0.01, 1, 10, 10, true)",
        true,
      );
    });

    it('answers from memory, and a change another instance commits reaches it through the trigger', async () => {
      expect((await instrument('MEM')).data.marketInstrument).toEqual({ lastPrice: '10.00', tradable: true });
      // Unannounced, the change is not seen: the answer came from memory, not from a read.
      await elsewhere("UPDATE instruments SET last_price = 11 WHERE symbol = 'MEM'", true);
      expect((await instrument('MEM')).data.marketInstrument).toEqual({ lastPrice: '10.00', tradable: true });
      // Announced at commit (a halt by another instance): every instance drops it and reads it again.
      await elsewhere("UPDATE instruments SET tradable = false WHERE symbol = 'MEM'");
      expect(await until(async () => (await instrument('MEM')).data.marketInstrument.tradable === false)).toBe(true);
      expect((await instrument('MEM')).data.marketInstrument).toEqual({ lastPrice: '11.00', tradable: false });
      await elsewhere("UPDATE instruments SET tradable = true WHERE symbol = 'MEM'");
      expect(await until(async () => (await instrument('MEM')).data.marketInstrument.tradable === true)).toBe(true);
    });

    it("sees this instance's own change at once (a price it sets, a halt), before any notification", async () => {
      await instrument('MEM');
      await elsewhere("UPDATE instruments SET last_price = 12 WHERE symbol = 'MEM'", true);
      expect((await instrument('MEM')).data.marketInstrument.lastPrice).toBe('11.00');
      service.instruments.changed(['MEM']);
      expect((await instrument('MEM')).data.marketInstrument.lastPrice).toBe('12.00');
    });

    it('never keeps an unknown symbol (anyone can ask for any number of them)', async () => {
      expect((await instrument('NEWCO')).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      await elsewhere(
        "INSERT INTO instruments (symbol, name, currency, tick_size, lot_size, last_price, previous_close, tradable) VALUES ('NEWCO', 'New', 'USD', 0.01, 1, 5, 5, true)",
        true,
      );
      expect((await instrument('NEWCO')).data.marketInstrument).toEqual({ lastPrice: '5.00', tradable: true });
    });
  });

  it("attack: another user's representation of an account resolves to null through _entities", async () => {
    const query =
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on Account { orders { nodes { id } } trades { nodes { id } } orderRules { accountId } } } }';
    const r = [{ __typename: 'Account', id: ALICE_ACCOUNT }];
    const res = await askSubgraph(`${internal.url}/graphql`, { keys, subgraph: 'oms' }, query, { sub: 'mallory' }, { r });
    expect(res.body.data._entities).toEqual([null]);
  });
});
