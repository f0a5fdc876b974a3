import { randomUUID } from 'node:crypto';
import { createLogger } from '@trading/logging';
import type { RunningServer } from '@trading/service';
import type { SubgraphService } from '@trading/subgraph';
import { askSubgraph, startOnTestDatabase, testKeys, type ServiceOnTestDatabase } from '@trading/testing';
import { createAccountsApp, loadAccountsConfig, seedAccountsDemo } from '../app';

describe('positions', () => {
  const keys = testKeys();
  const alice = randomUUID();
  const bob = randomUUID();
  const aliceAccount = randomUUID();
  const bobAccount = randomUUID();
  const symbols = ['A', 'AAPL', 'BRK.B', 'MSFT', 'SAP'];
  let running: ServiceOnTestDatabase<SubgraphService>;
  let service: SubgraphService;
  let internal: RunningServer;
  const ask = (query: string, variables: Record<string, unknown> = {}, claims: { sub: string; scope?: string[] } = { sub: alice }) =>
    askSubgraph(`${internal.url}/graphql`, { keys, subgraph: 'accounts' }, query, claims, variables);
  const PAGE =
    'query($id: ID!, $limit: Int, $cursor: String) { account(id: $id) { positions(limit: $limit, cursor: $cursor) { nodes { symbol } nextCursor } } }';
  const ONE =
    'query($id: ID!, $symbol: String!) { account(id: $id) { position(symbol: $symbol) { accountId symbol quantity averageCost costBasis currency realizedPnl updatedAt } } }';
  const VALUED =
    'query($r: [_Any!]!) { _entities(representations: $r) { ... on Position { symbol quantity costBasis marketPrice marketValue unrealizedPnl dayChange realizedPnl } } }';

  beforeAll(async () => {
    running = await startOnTestDatabase('accounts', (databaseUrl) =>
      createAccountsApp(loadAccountsConfig({ ...keys.env('accounts'), ACCOUNTS_DATABASE_URL: databaseUrl }), {
        logger: createLogger('accounts', 'silent'),
      }),
    );
    ({ service, internal } = running);
    await seedAccountsDemo(service.dataSource, {
      accounts: [
        { id: aliceAccount, userId: alice, number: `T-${aliceAccount.slice(0, 8)}`, type: 'MARGIN', baseCurrency: 'USD' },
        { id: bobAccount, userId: bob, number: `T-${bobAccount.slice(0, 8)}`, type: 'CASH', baseCurrency: 'EUR' },
      ],
      positions: [
        ...symbols.map((symbol) => ({ accountId: aliceAccount, symbol, quantity: '3', averageCost: '0.1', currency: 'USD' })),
        // Sold out: listed only on request, and its realised P&L kept.
        { accountId: aliceAccount, symbol: 'B', quantity: '0', averageCost: '0', currency: 'USD', realizedPnl: '4.5' },
        { accountId: bobAccount, symbol: 'SAP', quantity: '10.5', averageCost: '100.125', currency: 'EUR', realizedPnl: '12.345' },
      ],
    });
  });
  afterAll(async () => {
    await running?.stop();
  });

  it('pages through holdings by symbol with signed cursors', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await ask(PAGE, { id: aliceAccount, limit: 2, cursor });
      const page = res.body.data.account.positions as { nodes: Array<{ symbol: string }>; nextCursor: string | null };
      expect(page.nodes.length).toBeLessThanOrEqual(2);
      seen.push(...page.nodes.map((n) => n.symbol));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(symbols);
    const all = await ask(PAGE, { id: aliceAccount });
    expect(all.body.data.account.positions).toEqual({ nodes: symbols.map((symbol) => ({ symbol })), nextCursor: null });
  });

  it("leaves closed holdings (quantity 0) out unless includeClosed, and keeps the two lists' cursors apart", async () => {
    const WITH_CLOSED =
      'query($id: ID!, $limit: Int, $cursor: String, $all: Boolean) { account(id: $id) { positions(limit: $limit, cursor: $cursor, includeClosed: $all) { nodes { symbol quantity realizedPnl } nextCursor } } }';
    const open = await ask(WITH_CLOSED, { id: aliceAccount, all: false });
    expect(open.body.data.account.positions.nodes.map((n: { symbol: string }) => n.symbol)).toEqual(symbols);
    const all = await ask(WITH_CLOSED, { id: aliceAccount, all: true });
    expect(all.body.data.account.positions.nodes.map((n: { symbol: string }) => n.symbol)).toEqual([
      'A',
      'AAPL',
      'B',
      'BRK.B',
      'MSFT',
      'SAP',
    ]);
    expect(all.body.data.account.positions.nodes[2]).toEqual({ symbol: 'B', quantity: '0', realizedPnl: '4.50' });
    // Paging the full list reaches the closed holding too.
    const first = await ask(WITH_CLOSED, { id: aliceAccount, all: true, limit: 2 });
    const second = await ask(WITH_CLOSED, { id: aliceAccount, all: true, limit: 2, cursor: first.body.data.account.positions.nextCursor });
    expect(second.body.data.account.positions.nodes.map((n: { symbol: string }) => n.symbol)).toEqual(['B', 'BRK.B']);
    // A cursor of one list is refused by the other.
    const mixed = await ask(WITH_CLOSED, { id: aliceAccount, all: false, cursor: first.body.data.account.positions.nextCursor });
    expect(mixed.body.errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT', field: 'cursor' });
    // One holding by symbol is still found when closed.
    expect((await ask(ONE, { id: aliceAccount, symbol: 'B' })).body.data.account.position).toMatchObject({ symbol: 'B', quantity: '0' });
  });

  it('answers BAD_USER_INPUT naming limit or cursor for a bad limit, a tampered cursor or a cursor of another list', async () => {
    for (const limit of [0, 101, -1]) {
      const res = await ask(PAGE, { id: aliceAccount, limit });
      expect(res.body.errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT', field: 'limit' });
    }
    const first = (await ask(PAGE, { id: aliceAccount, limit: 1 })).body.data.account.positions.nextCursor as string;
    const [body, mac] = first.split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify({ a: aliceAccount, s: 'AAPL' })).toString('base64url');
    for (const cursor of [`${body}x.${mac}`, `${forged}.${mac}`, 'garbage', `${body}.${mac}.x`]) {
      const res = await ask(PAGE, { id: aliceAccount, cursor });
      expect(res.body.errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT', field: 'cursor' });
    }
    const elsewhere = await ask(PAGE, { id: bobAccount, cursor: first }, { sub: bob });
    expect(elsewhere.body.errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT', field: 'cursor' });
  });

  it('finds one holding by symbol: the position, null when not held, 400 naming symbol when malformed', async () => {
    const held = await ask(ONE, { id: bobAccount, symbol: 'SAP' }, { sub: bob });
    expect(held.body.data.account.position).toEqual({
      accountId: bobAccount,
      symbol: 'SAP',
      quantity: '10.5',
      averageCost: '100.125',
      costBasis: '1051.31', // 1051.3125
      currency: 'EUR',
      realizedPnl: '12.35', // 12.345, half-up
      updatedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    expect((await ask(ONE, { id: bobAccount, symbol: 'TSLA' }, { sub: bob })).body.data.account.position).toBeNull();
    for (const symbol of ['sap', '', 'A'.repeat(13), "SAP' OR 1=1"]) {
      const res = await ask(ONE, { id: bobAccount, symbol }, { sub: bob });
      expect(res.body.errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT', field: 'symbol' });
    }
  });

  it("gives nothing of another user's account: the account is null, so are its positions", async () => {
    const res = await ask('query($id: ID!) { account(id: $id) { positions { nodes { symbol } } position(symbol: "SAP") { symbol } } }', {
      id: bobAccount,
    });
    expect(res.body).toEqual({ data: { account: null } });
  });

  it('values positions exactly from the marks oms provides (@requires)', async () => {
    const res = await ask(VALUED, {
      r: [
        { __typename: 'Position', accountId: aliceAccount, symbol: 'AAPL', lastPrice: '0.3', previousClose: '0.2' },
        { __typename: 'Position', accountId: aliceAccount, symbol: 'MSFT', lastPrice: '0.05', previousClose: '0.1' },
      ],
    });
    expect(res.body.data._entities).toEqual([
      // 3 × 0.1 is 0.30 and 3 × 0.3 is 0.90, never 0.30000000000000004.
      {
        symbol: 'AAPL',
        quantity: '3',
        costBasis: '0.30',
        marketPrice: '0.30',
        marketValue: '0.90',
        unrealizedPnl: '0.60',
        dayChange: '0.30',
        realizedPnl: '0.00',
      },
      {
        symbol: 'MSFT',
        quantity: '3',
        costBasis: '0.30',
        marketPrice: '0.05',
        marketValue: '0.15',
        unrealizedPnl: '-0.15',
        dayChange: '-0.15',
        realizedPnl: '0.00',
      },
    ]);
    const rounding = await ask(
      VALUED,
      { r: [{ __typename: 'Position', accountId: bobAccount, symbol: 'SAP', lastPrice: '101.3333', previousClose: '101.33325' }] },
      { sub: bob },
    );
    // 10.5 × 101.3333 = 1063.99965; 10.5 × 1.2083 = 12.68715; 10.5 × 0.00005 = 0.000525
    expect(rounding.body.data._entities).toEqual([
      {
        symbol: 'SAP',
        quantity: '10.5',
        costBasis: '1051.31',
        marketPrice: '101.3333',
        marketValue: '1064.00',
        unrealizedPnl: '12.69',
        dayChange: '0.00',
        realizedPnl: '12.35',
      },
    ]);
    // Figures add up as shown: 10.5 × 100.1254 = 1051.3167 → 1051.32, cost 1051.3125 → 1051.31, so the
    // unrealised P&L is 0.01 (rounding 10.5 × 0.0004 = 0.0042 on its own would show 0.00).
    const consistent = await ask(
      VALUED,
      { r: [{ __typename: 'Position', accountId: bobAccount, symbol: 'SAP', lastPrice: '100.1254', previousClose: '100.1254' }] },
      { sub: bob },
    );
    expect(consistent.body.data._entities[0]).toMatchObject({
      marketValue: '1051.32',
      costBasis: '1051.31',
      unrealizedPnl: '0.01',
      dayChange: '0.00',
    });
  });

  it('gives the P&L and day change in percent, and the quantity not promised to working sells, exactly', async () => {
    const FIGURES =
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on Position { symbol quantity costBasis unrealizedPnl unrealizedPnlPercent dayChangePercent quantityAvailable } } }';
    const mark = (symbol: string, lastPrice: string, previousClose: string, openSellQuantity: string) => ({
      __typename: 'Position',
      accountId: aliceAccount,
      symbol,
      lastPrice,
      previousClose,
      openSellQuantity,
    });
    const res = await ask(FIGURES, {
      r: [mark('AAPL', '0.3', '0.2', '1'), mark('MSFT', '0.05', '0.1', '5'), mark('B', '7', '7', '0'), mark('A', '0.1', '0', '3')],
    });
    expect(res.body.data._entities).toEqual([
      // 0.60 / 0.30 = 200%; (0.3 − 0.2) / 0.2 = 50%; 3 − 1 sold by working orders.
      {
        symbol: 'AAPL',
        quantity: '3',
        costBasis: '0.30',
        unrealizedPnl: '0.60',
        unrealizedPnlPercent: '200.00',
        dayChangePercent: '50.00',
        quantityAvailable: '2',
      },
      // More promised than shown (settlement not applied yet): nothing free, never negative.
      {
        symbol: 'MSFT',
        quantity: '3',
        costBasis: '0.30',
        unrealizedPnl: '-0.15',
        unrealizedPnlPercent: '-50.00',
        dayChangePercent: '-50.00',
        quantityAvailable: '0',
      },
      // Closed: no cost to compare with.
      {
        symbol: 'B',
        quantity: '0',
        costBasis: '0.00',
        unrealizedPnl: '0.00',
        unrealizedPnlPercent: null,
        dayChangePercent: '0.00',
        quantityAvailable: '0',
      },
      // No previous close: no day change in percent.
      {
        symbol: 'A',
        quantity: '3',
        costBasis: '0.30',
        unrealizedPnl: '0.00',
        unrealizedPnlPercent: '0.00',
        dayChangePercent: null,
        quantityAvailable: '0',
      },
    ]);
    const sap = await ask(
      FIGURES,
      {
        r: [
          {
            __typename: 'Position',
            accountId: bobAccount,
            symbol: 'SAP',
            lastPrice: '101.3333',
            previousClose: '101.33325',
            openSellQuantity: '0.5',
          },
        ],
      },
      { sub: bob },
    );
    // 12.69 / 1051.31 = 1.20706...%; 0.00005 / 101.33325 = 0.0000493...%; 10.5 − 0.5.
    expect(sap.body.data._entities).toEqual([
      {
        symbol: 'SAP',
        quantity: '10.5',
        costBasis: '1051.31',
        unrealizedPnl: '12.69',
        unrealizedPnlPercent: '1.21',
        dayChangePercent: '0.00',
        quantityAvailable: '10',
      },
    ]);
  });

  it("never resolves another user's position, an unheld one or a malformed one through _entities", async () => {
    const res = await ask(VALUED, {
      r: [
        { __typename: 'Position', accountId: bobAccount, symbol: 'SAP', lastPrice: '1', previousClose: '1' },
        { __typename: 'Position', accountId: aliceAccount, symbol: 'TSLA', lastPrice: '1', previousClose: '1' },
        { __typename: 'Position', accountId: 'not-a-uuid', symbol: 'SAP', lastPrice: '1', previousClose: '1' },
        { __typename: 'Position', accountId: aliceAccount, symbol: 'SAP', lastPrice: '1', previousClose: '1' },
      ],
    });
    expect(res.body.data._entities).toEqual([null, null, null, expect.objectContaining({ symbol: 'SAP', marketValue: '3.00' })]);
  });

  it('needs read:accounts for positions, one position and position references', async () => {
    const claims = { sub: alice, scope: ['read:orders', 'read:banking'] };
    // Query.account itself needs read:accounts; ask the entity paths, which the gateway would use.
    for (const field of ['positions { nodes { symbol } }', 'position(symbol: "SAP") { symbol }']) {
      const res = await ask(
        `query($r: [_Any!]!) { _entities(representations: $r) { ... on Account { ${field} } } }`,
        { r: [{ __typename: 'Account', id: aliceAccount }] },
        claims,
      );
      expect(res.body.errors[0].extensions.code).toBe('INSUFFICIENT_SCOPE');
    }
    const refs = await ask(
      VALUED,
      { r: [{ __typename: 'Position', accountId: aliceAccount, symbol: 'SAP', lastPrice: '1', previousClose: '1' }] },
      claims,
    );
    expect(refs.body.errors[0].extensions.code).toBe('INSUFFICIENT_SCOPE');
  });
});
