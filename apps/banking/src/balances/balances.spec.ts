import { randomUUID } from 'node:crypto';
import { createLogger } from '@trading/logging';
import { listen, type RunningServer } from '@trading/service';
import type { SubgraphService } from '@trading/subgraph';
import { askSubgraph, createTestDatabases, testSecret, type TestDatabases } from '@trading/testing';
import { createBankingApp, loadBankingConfig } from '../app';
import { BalancesService } from './balances.service';

describe('banking ledger and balances', () => {
  const secret = testSecret();
  const account = randomUUID();
  let dbs: TestDatabases<'banking'>;
  let service: SubgraphService;
  let server: RunningServer;

  beforeAll(async () => {
    dbs = await createTestDatabases(['banking']);
    service = await createBankingApp(loadBankingConfig({ INTERNAL_SIGNING_KEY: secret, BANKING_DATABASE_URL: dbs.urls.banking }), { logger: createLogger('banking', 'silent') });
    server = await listen(service.app, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await server?.close();
    await service?.close();
    await dbs?.drop();
  });

  it('derives balances from balanced journal entries, exactly', async () => {
    const balances = new BalancesService(service.dataSource);
    await balances.deposit(account, 'USD', '0.10', 'one');
    await balances.deposit(account, 'USD', '0.20', 'two');
    await balances.deposit(account, 'EUR', '5', 'three');
    const res = await askSubgraph(
      `${server.url}/graphql`,
      secret,
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on Account { balances { currency cash } } } }',
      { sub: 'u' },
      { r: [{ __typename: 'Account', id: account }] },
    );
    expect(res.body.data._entities[0].balances).toEqual([
      { currency: 'EUR', cash: '5.00' },
      { currency: 'USD', cash: '0.30' },
    ]);
    const [{ total }] = await service.dataSource.query('SELECT coalesce(sum(amount), 0)::text AS total FROM postings');
    expect(total).toBe('0.00000000');
  });

  it('lets PostgreSQL refuse an entry that does not balance', async () => {
    await expect(
      service.dataSource.transaction(async (tx) => {
        const [entry] = await tx.query(`INSERT INTO journal_entries (kind) VALUES ('BROKEN') RETURNING id`);
        await tx.query(`INSERT INTO postings (entry_id, account_id, book, currency, amount) VALUES ($1, $2, 'CUSTOMER_CASH', 'USD', 100), ($1, $2, 'BANK_CLEARING', 'USD', -99)`, [entry.id, account]);
      }),
    ).rejects.toThrow(/does not balance/);
    const [{ count }] = await service.dataSource.query(`SELECT count(*)::int AS count FROM journal_entries WHERE kind = 'BROKEN'`);
    expect(count).toBe(0);
  });

  it('needs read:banking', async () => {
    const res = await askSubgraph(
      `${server.url}/graphql`,
      secret,
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on Account { balances { cash } } } }',
      { sub: 'u', scope: ['read:accounts'] },
      { r: [{ __typename: 'Account', id: account }] },
    );
    expect(res.body.errors[0].extensions.code).toBe('INSUFFICIENT_SCOPE');
  });
});
