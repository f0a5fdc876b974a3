import { randomBytes, randomUUID } from 'node:crypto';
import express from 'express';
import { INTERNAL_CLAIMS_HEADER, INTERNAL_HOLDS_SCOPE, InternalClaimsVerifier, type Claims, type ServiceName } from '@trading/auth';
import { createLogger } from '@trading/logging';
import { listen, type RunningServer } from '@trading/service';
import type { SubgraphService } from '@trading/subgraph';
import { askSubgraph, createTestDatabases, http, testKeys, type TestDatabases, type TestKeys } from '@trading/testing';
import { createBankingApp } from '../app';
import { loadBankingConfig } from '../config';
import { BOOK_BALANCE_DRIFT_SQL } from '../ledger/ledger';

/** Test-only: a banking app on a throwaway database, beside a stand-in accounts subgraph. */
export interface BankingHarness {
  /** A key for cursor codecs the tests make themselves. */
  secret: string;
  keys: TestKeys;
  /** The public listener (health only). */
  publicUrl: string;
  service: SubgraphService;
  url: string;
  /** The stand-in's own record of who owns what (what the real accounts subgraph would answer). */
  accounts: Map<string, { userId: string; status: string }>;
  /** A fresh ACTIVE account owned by `userId`. */
  openAccount(userId: string, status?: string): string;
  gql(query: string, variables: Record<string, unknown>, claims: Partial<Claims> & { sub: string }): Promise<{ status: number; body: any }>;
  /** The hold API as the OMS calls it (acting for `userId`, default "u"), or as another service / with other scopes. */
  holds(
    method: string,
    path: string,
    body?: unknown,
    as?: { userId?: string; scope?: string[]; from?: ServiceName },
  ): Promise<{ status: number; body: any }>;
  /** Every entry balances, the whole ledger sums to zero, each account's sub-ledger too, and every running total equals its postings. */
  ledgerInvariants(): Promise<{ unbalancedEntries: number; total: string; unbalancedAccounts: number; driftedTotals: number }>;
  close(): Promise<void>;
}

export async function startBankingHarness(env: Record<string, string> = {}): Promise<BankingHarness> {
  const keys = testKeys();
  const accounts = new Map<string, { userId: string; status: string }>();
  const accountsServer = await startAccountsStandIn(keys, accounts);

  const dbs: TestDatabases<'banking'> = await createTestDatabases(['banking']);
  let service: SubgraphService;
  try {
    service = await createBankingApp(
      loadBankingConfig({
        ...keys.env('banking'),
        BANKING_DATABASE_URL: dbs.urls.banking,
        ACCOUNTS_URL: `${accountsServer.url}/graphql`,
        BANKING_CLEARING_DELAY_MS: '200',
        BANKING_CLEARING_POLL_MS: '50',
        ...env,
      }),
      { logger: createLogger('banking', (process.env['BANKING_TEST_LOG'] as 'silent' | undefined) ?? 'silent') },
    );
  } catch (err) {
    await accountsServer.close();
    await dbs.drop();
    throw err;
  }
  const server = await listen(service.app, 0, '127.0.0.1');
  const internal = await listen(service.internal, 0, '127.0.0.1');
  const url = internal.url;

  return {
    secret: randomBytes(32).toString('hex'),
    keys,
    publicUrl: server.url,
    service,
    url,
    accounts,
    openAccount: (userId, status = 'ACTIVE') => {
      const id = randomUUID();
      accounts.set(id, { userId, status });
      return id;
    },
    gql: (query, variables, claims) => askSubgraph(`${url}/graphql`, { keys, subgraph: 'banking' }, query, claims, variables),
    holds: async (method, path, body, as = {}) => {
      const header = await keys.sign(
        { sub: as.userId ?? 'u', sid: 'oms', kind: 'pat', scope: as.scope ?? [INTERNAL_HOLDS_SCOPE] },
        'banking',
        as.from ?? 'oms',
      );
      return http(method, `${url}/internal/holds${path}`, { body, headers: { [INTERNAL_CLAIMS_HEADER]: header } });
    },
    ledgerInvariants: () => ledgerInvariants(service.dataSource),
    close: async () => {
      await server.close();
      await internal.close();
      await service.close();
      await accountsServer.close();
      await dbs.drop();
    },
  };
}

/** Answers `account(id)` as the accounts subgraph does: only the caller's own account. */
async function startAccountsStandIn(
  keys: TestKeys,
  accounts: ReadonlyMap<string, { userId: string; status: string }>,
): Promise<RunningServer> {
  const verifier = new InternalClaimsVerifier('accounts', keys.trusted);
  const standIn = express();
  standIn.use(express.json());
  standIn.post('/graphql', async (req, res) => {
    const claims = await verifier.verify(req.get(INTERNAL_CLAIMS_HEADER));
    if (!claims) return void res.status(401).json({ errors: [{ message: 'no claims', extensions: { code: 'UNAUTHENTICATED' } }] });
    if (!claims.scope.includes('read:accounts'))
      return void res.json({ errors: [{ message: 'scope', extensions: { code: 'INSUFFICIENT_SCOPE' } }], data: null });
    if (/\baccounts\b/.test(String(req.body?.query))) {
      return void res.json({ data: { accounts: [...accounts].filter(([, a]) => a.userId === claims.sub).map(([id]) => ({ id })) } });
    }
    const id = req.body?.variables?.id as string;
    const account = accounts.get(id);
    res.json({ data: { account: account && account.userId === claims.sub ? { id, baseCurrency: 'USD', status: account.status } : null } });
  });
  return listen(standIn, 0, '127.0.0.1');
}

/** Every entry balances, the ledger and each account sum to zero, every running total equals its postings. */
async function ledgerInvariants(ds: SubgraphService['dataSource']): ReturnType<BankingHarness['ledgerInvariants']> {
  const [{ n: unbalancedEntries }] = await ds.query(
    'SELECT count(*)::int AS n FROM (SELECT entry_id FROM postings GROUP BY entry_id, currency HAVING sum(amount) <> 0) x',
  );
  const [{ total }] = await ds.query('SELECT coalesce(sum(amount), 0)::text AS total FROM postings');
  const [{ n: unbalancedAccounts }] = await ds.query(
    'SELECT count(*)::int AS n FROM (SELECT account_id FROM postings GROUP BY account_id, currency HAVING sum(amount) <> 0) x',
  );
  const driftedTotals = (await ds.query(BOOK_BALANCE_DRIFT_SQL)).length;
  return { unbalancedEntries, total, unbalancedAccounts, driftedTotals };
}

const FUNDING_FIELDS =
  'id accountId type state amount currency reference rejectReason createdAt updatedAt completedAt cancelledAt rejectedAt';
export const DEPOSIT = `mutation($input: FundingInput!, $key: String) { deposit(input: $input, idempotencyKey: $key) { ${FUNDING_FIELDS} } }`;
export const WITHDRAW = `mutation($input: FundingInput!, $key: String) { withdraw(input: $input, idempotencyKey: $key) { ${FUNDING_FIELDS} } }`;
export const CANCEL = `mutation($id: ID!, $key: String) { cancelFundingTransaction(transactionId: $id, idempotencyKey: $key) { ${FUNDING_FIELDS} } }`;
export const ENTITY = (fields: string) => `query($r: [_Any!]!) { _entities(representations: $r) { ... on Account { ${fields} } } }`;

/** Polls until `check` passes or the time runs out. */
export async function eventually<T>(probe: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (check(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}
