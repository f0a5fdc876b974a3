import { randomUUID } from 'node:crypto';
import { createLogger } from '@trading/logging';
import { listen, type RunningServer } from '@trading/service';
import { askSubgraph, startOnTestDatabase, testKeys, type ServiceOnTestDatabase } from '@trading/testing';
import type { SubgraphService } from '@trading/subgraph';
import { createAccountsApp, loadAccountsConfig, seedAccountsDemo } from '../app';

describe('accounts subgraph', () => {
  const keys = testKeys();
  const alice = randomUUID();
  const bob = randomUUID();
  const aliceAccount = randomUUID();
  const bobAccount = randomUUID();
  let running: ServiceOnTestDatabase<SubgraphService>;
  let service: SubgraphService;
  let internal: RunningServer;
  let url: string;

  beforeAll(async () => {
    running = await startOnTestDatabase('accounts', (databaseUrl) =>
      createAccountsApp(loadAccountsConfig({ ...keys.env('accounts'), ACCOUNTS_DATABASE_URL: databaseUrl }), {
        logger: createLogger('accounts', 'silent'),
      }),
    );
    ({ service, internal } = running);
    url = `${internal.url}/graphql`;
    await seedAccountsDemo(service.dataSource, {
      accounts: [
        { id: aliceAccount, userId: alice, number: `T-${aliceAccount.slice(0, 8)}`, type: 'MARGIN', baseCurrency: 'USD' },
        { id: bobAccount, userId: bob, number: `T-${bobAccount.slice(0, 8)}`, type: 'CASH', baseCurrency: 'EUR' },
      ],
      positions: [{ accountId: aliceAccount, symbol: 'AAPL', quantity: '10.5', averageCost: '100.125', currency: 'USD' }],
    });
  });
  afterAll(async () => {
    await running?.stop();
  });

  it("lists only the caller's accounts, with exact decimals for positions", async () => {
    const res = await askSubgraph(
      url,
      { keys, subgraph: 'accounts' },
      '{ accounts { id type baseCurrency positions { nodes { symbol quantity averageCost currency } } } }',
      { sub: alice },
    );
    expect(res.body).toEqual({
      data: {
        accounts: [
          {
            id: aliceAccount,
            type: 'MARGIN',
            baseCurrency: 'USD',
            positions: { nodes: [{ symbol: 'AAPL', quantity: '10.5', averageCost: '100.125', currency: 'USD' }] },
          },
        ],
      },
    });
  });

  it("never resolves another user's account, by id or by entity reference", async () => {
    const byId = await askSubgraph(
      url,
      { keys, subgraph: 'accounts' },
      'query($id: ID!) { account(id: $id) { id } }',
      { sub: alice },
      { id: bobAccount },
    );
    expect(byId.body.data.account).toBeNull();
    const malformed = await askSubgraph(
      url,
      { keys, subgraph: 'accounts' },
      'query($id: ID!) { account(id: $id) { id } }',
      { sub: alice },
      { id: 'not-a-uuid' },
    );
    expect(malformed.body.data.account).toBeNull();
    const entities = await askSubgraph(
      url,
      { keys, subgraph: 'accounts' },
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on Account { id } } }',
      { sub: alice },
      {
        r: [
          { __typename: 'Account', id: bobAccount },
          { __typename: 'Account', id: aliceAccount },
        ],
      },
    );
    expect(entities.body.data._entities).toEqual([null, { id: aliceAccount }]);
  });

  it('needs read:accounts', async () => {
    const res = await askSubgraph(url, { keys, subgraph: 'accounts' }, '{ accounts { id } }', { sub: alice, scope: ['read:orders'] });
    expect(res.body.errors[0].extensions.code).toBe('INSUFFICIENT_SCOPE');
  });

  describe('account settings', () => {
    const UPDATE =
      'mutation($id: ID!, $input: AccountSettingsInput!) { updateAccountSettings(accountId: $id, input: $input) { accountId nickname tradeConfirmationEmails } }';
    const SETTINGS = 'query($id: ID!) { account(id: $id) { nickname tradeConfirmationEmails } }';
    const update = (
      input: Record<string, unknown>,
      claims: { sub: string; scope?: string[]; access?: 'READ_ONLY' | 'READ_WRITE' } = { sub: alice },
      id: string = aliceAccount,
    ) => askSubgraph(url, { keys, subgraph: 'accounts' }, UPDATE, claims, { id, input });
    const settingsOf = async (id: string = aliceAccount, sub: string = alice) =>
      (await askSubgraph(url, { keys, subgraph: 'accounts' }, SETTINGS, { sub }, { id })).body.data.account;

    it('starts with no nickname and confirmations on; the owner changes either, trimmed, and clears the nickname with null', async () => {
      expect(await settingsOf()).toEqual({ nickname: null, tradeConfirmationEmails: true });
      const named = await update({ nickname: '  Retirement   fund ' });
      expect(named.body).toEqual({
        data: { updateAccountSettings: { accountId: aliceAccount, nickname: 'Retirement   fund', tradeConfirmationEmails: true } },
      });
      // Read back at once on this instance (its own write), a field left out keeps its value.
      expect(await settingsOf()).toEqual({ nickname: 'Retirement   fund', tradeConfirmationEmails: true });
      await update({ tradeConfirmationEmails: false });
      expect(await settingsOf()).toEqual({ nickname: 'Retirement   fund', tradeConfirmationEmails: false });
      // 64 characters, counted as characters (not UTF-16 units).
      const longest = '€'.repeat(32) + '😀'.repeat(32);
      expect((await update({ nickname: longest })).body.data.updateAccountSettings.nickname).toBe(longest);
      await update({ nickname: null, tradeConfirmationEmails: true });
      expect(await settingsOf()).toEqual({ nickname: null, tradeConfirmationEmails: true });
    });

    it('refuses a bad value naming the field, and changes nothing', async () => {
      await update({ nickname: 'Kept' });
      for (const [input, field] of [
        [{ nickname: '' }, 'nickname'],
        [{ nickname: '   ' }, 'nickname'],
        [{ nickname: 'x'.repeat(65) }, 'nickname'],
        [{ nickname: 'two\nlines' }, 'nickname'],
        [{ nickname: 'tab\there' }, 'nickname'],
        [{ tradeConfirmationEmails: null }, 'tradeConfirmationEmails'],
        [{}, 'input'],
      ] as const) {
        const res = await update(input);
        expect({ input, error: res.body.errors?.[0]?.extensions }).toEqual({ input, error: { code: 'BAD_USER_INPUT', field } });
      }
      // Types and unknown fields are GraphQL's own checks.
      for (const input of [{ nickname: 42 }, { tradeConfirmationEmails: 'yes' }, { colour: 'blue' }]) {
        const res = await update(input);
        expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      }
      expect(await settingsOf()).toEqual({ nickname: 'Kept', tradeConfirmationEmails: true });
    });

    it("changes only the caller's own account: another user's, an unknown or a malformed one is NOT_FOUND", async () => {
      for (const id of [bobAccount, randomUUID(), 'not-a-uuid']) {
        const res = await update({ nickname: 'Mine now' }, { sub: alice }, id);
        expect(res.body.errors[0].extensions).toEqual({ code: 'NOT_FOUND', field: 'accountId' });
      }
      expect(await settingsOf(bobAccount, bob)).toEqual({ nickname: null, tradeConfirmationEmails: true });
    });

    it('needs write:accounts (alone enough), and a READ_ONLY token may not change anything', async () => {
      const reader = await update({ nickname: 'Nope' }, { sub: alice, scope: ['read:accounts'] });
      expect(reader.body.errors[0].extensions.code).toBe('INSUFFICIENT_SCOPE');
      const readOnly = await update({ nickname: 'Nope' }, { sub: alice, scope: ['write:accounts'], access: 'READ_ONLY' });
      expect(readOnly.body.errors[0].extensions.code).toBe('READ_ONLY_TOKEN');
      const writer = await update({ nickname: 'Writer' }, { sub: alice, scope: ['write:accounts'] });
      expect(writer.body.data.updateAccountSettings).toEqual({
        accountId: aliceAccount,
        nickname: 'Writer',
        tradeConfirmationEmails: true,
      });
      // Reading the settings through the account is a read like the rest of it.
      const unread = await askSubgraph(
        url,
        { keys, subgraph: 'accounts' },
        SETTINGS,
        { sub: alice, scope: ['write:accounts'] },
        { id: aliceAccount },
      );
      expect(unread.body.errors[0].extensions.code).toBe('INSUFFICIENT_SCOPE');
    });

    it('keeps the database to the same rule, whoever writes', async () => {
      await expect(service.dataSource.query(`UPDATE accounts SET nickname = '' WHERE id = $1`, [aliceAccount])).rejects.toThrow(
        /check constraint/,
      );
      await expect(
        service.dataSource.query(`UPDATE accounts SET nickname = repeat('x', 65) WHERE id = $1`, [aliceAccount]),
      ).rejects.toThrow(/check constraint/);
    });
  });

  it('a change to an account reaches every instance at once, made by the service or by hand', async () => {
    const other = await createAccountsApp(loadAccountsConfig({ ...keys.env('accounts'), ACCOUNTS_DATABASE_URL: running.databaseUrl }), {
      logger: createLogger('accounts', 'silent'),
    });
    const otherInternal = await listen(other.internal, 0);
    const statusOn = async (at: string) =>
      (await askSubgraph(`${at}/graphql`, { keys, subgraph: 'accounts' }, '{ accounts { status } }', { sub: bob })).body.data.accounts[0]
        .status as string;
    const seenEverywhere = async (status: string) => {
      for (const deadline = Date.now() + 5000; ; await new Promise((r) => setTimeout(r, 5))) {
        const seen = [await statusOn(internal.url), await statusOn(otherInternal.url)];
        if (seen.every((s) => s === status)) return;
        if (Date.now() > deadline) throw new Error(`still ${seen.join(', ')}, not ${status}`);
      }
    };
    try {
      await seenEverywhere('ACTIVE'); // both instances now hold bob's accounts in memory
      // An operator's UPDATE, outside the service: the table's trigger announces it at commit.
      await service.dataSource.query(`UPDATE accounts SET status = 'RESTRICTED' WHERE id = $1`, [bobAccount]);
      await seenEverywhere('RESTRICTED');
      await other.dataSource.query(`UPDATE accounts SET status = 'ACTIVE' WHERE id = $1`, [bobAccount]);
      await seenEverywhere('ACTIVE');
    } finally {
      await otherInternal.close();
      await other.close();
    }
  });

  it('runs its migrations once however many instances start together', async () => {
    const more = await Promise.all(
      [1, 2].map(() =>
        createAccountsApp(loadAccountsConfig({ ...keys.env('accounts'), ACCOUNTS_DATABASE_URL: running.databaseUrl }), {
          logger: createLogger('accounts', 'silent'),
        }),
      ),
    );
    const [{ count }] = await service.dataSource.query('SELECT count(*)::int AS count FROM migrations');
    expect(count).toBe(service.dataSource.migrations.length);
    for (const s of more) await s.close();
  });
});
