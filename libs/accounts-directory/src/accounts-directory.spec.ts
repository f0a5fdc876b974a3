import express from 'express';
import { INTERNAL_CLAIMS_HEADER, InternalClaimsVerifier, type Claims } from '@trading/auth';
import { listen, type RunningServer } from '@trading/service';
import { testKeys } from '@trading/testing';
import { MemoryEventLog } from '@trading/events';
import { createLogger } from '@trading/logging';
import { AccountChangesAnnouncer, AccountsSubgraphDirectory, KnownOwners, RememberedAccounts } from './index';

describe('AccountsSubgraphDirectory', () => {
  const keys = testKeys();
  const verifier = new InternalClaimsVerifier('accounts', keys.trusted);
  const claims: Claims = { sub: 'alice', sid: 's', kind: 'oauth', clientId: 'vendor', scope: ['write:banking'] };
  let server: RunningServer;
  let seen: Claims | null = null;
  let asked: { query?: string; variables?: Record<string, unknown> } = {};
  let answer: unknown;
  let questions = 0;

  beforeAll(async () => {
    const app = express();
    app.use(express.json());
    app.post('/graphql', async (req, res) => {
      questions += 1;
      seen = await verifier.verify(req.get(INTERNAL_CLAIMS_HEADER));
      asked = req.body;
      res.json(answer);
    });
    server = await listen(app, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('asks as the caller, narrowed to read:accounts, and reads the answer', async () => {
    const ownership = new AccountsSubgraphDirectory(`${server.url}/graphql`, keys.signer('banking'));
    answer = { data: { account: { id: 'a', type: 'CASH', baseCurrency: 'USD', status: 'ACTIVE' } } };
    await expect(ownership.find('a', claims)).resolves.toEqual({ id: 'a', type: 'CASH', baseCurrency: 'USD', status: 'ACTIVE' });
    expect(seen).toMatchObject({ sub: 'alice', kind: 'oauth', clientId: 'vendor', scope: ['read:accounts'] });
    expect(asked.variables).toMatchObject({ id: 'a', withPosition: false });
    // A sell asks for the holding in the same query.
    await ownership.find('a', claims, { symbol: 'AAPL', requestId: 'r-1' });
    expect(asked.variables).toEqual({ id: 'a', symbol: 'AAPL', withPosition: true });
    answer = { data: { accounts: [{ id: 'a' }, { id: 'b' }] } };
    await expect(ownership.ownedIds(claims)).resolves.toEqual(['a', 'b']);
    answer = { data: { account: null } };
    await expect(ownership.find('a', claims)).resolves.toBeNull();
    answer = { errors: [{ message: 'boom', extensions: { code: 'INTERNAL_SERVER_ERROR' } }], data: null };
    await expect(ownership.find('a', claims)).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    await ownership.close();
  });

  it('answers 503 when the accounts service cannot be reached', async () => {
    const ownership = new AccountsSubgraphDirectory('http://127.0.0.1:1/graphql', keys.signer('banking'));
    await expect(ownership.find('a', claims)).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    await ownership.close();
  });

  it('KnownOwners asks once per confirmed (user, account) pair, never remembers a refusal, and is bounded', async () => {
    const directory = new AccountsSubgraphDirectory(`${server.url}/graphql`, keys.signer('banking'));
    const owners = new KnownOwners(directory, 2);
    const bob: Claims = { ...claims, sub: 'bob' };
    questions = 0;
    answer = { data: { account: { id: 'a', type: 'CASH', baseCurrency: 'USD', status: 'ACTIVE' } } };
    expect(await owners.owns('a', claims)).toBe(true);
    expect(await owners.owns('a', claims)).toBe(true);
    expect(questions).toBe(1);
    // Another user naming alice's account is asked about as themselves, every time: a refusal is not kept.
    answer = { data: { account: null } };
    expect(await owners.owns('a', bob)).toBe(false);
    expect(await owners.owns('a', bob)).toBe(false);
    expect(questions).toBe(3);
    expect(seen).toMatchObject({ sub: 'bob' });
    // At most two pairs: a third confirmation drops the oldest, which is asked about again.
    answer = { data: { account: { id: 'x', type: 'CASH', baseCurrency: 'USD', status: 'ACTIVE' } } };
    await owners.owns('b', claims);
    await owners.owns('c', claims);
    questions = 0;
    await owners.owns('a', claims);
    expect(questions).toBe(1);
    await directory.close();
  });

  it('RememberedAccounts: answers a remembered owner from memory while accounts announces it listens, never another user, and forgets on a change or a closing', async () => {
    const log = new MemoryEventLog();
    const listeners: Array<(userId: string) => void> = [];
    const heard = { serving: true, onChange: (l: (userId: string) => void) => void listeners.push(l) };
    const logger = createLogger('test', 'silent');
    const announcer = new AccountChangesAnnouncer(heard, log, 'changes', keys.identity('accounts').SERVICE_KEY, logger, 50);
    const remembered = new RememberedAccounts(
      new AccountsSubgraphDirectory(`${server.url}/graphql`, keys.signer('oms')),
      log,
      'changes',
      keys.trusted,
      logger,
      10,
    );
    remembered.start();
    announcer.start();
    for (let i = 0; i < 100 && !remembered.serving; i++) await new Promise((r) => setTimeout(r, 20));
    expect(remembered.serving).toBe(true);
    answer = { data: { account: { id: 'a', type: 'CASH', baseCurrency: 'USD', status: 'ACTIVE' } } };
    questions = 0;
    await remembered.find('a', claims);
    expect(await remembered.find('a', claims)).toMatchObject({ status: 'ACTIVE' });
    expect(questions).toBe(1);
    // Another user naming the same account is asked about as themselves.
    answer = { data: { account: null } };
    expect(await remembered.find('a', { ...claims, sub: 'bob' })).toBeNull();
    expect(questions).toBe(2);
    // A change to alice's accounts, announced (the in-process log hands it over at once): asked again.
    answer = { data: { account: { id: 'a', type: 'CASH', baseCurrency: 'USD', status: 'RESTRICTED' } } };
    for (const l of listeners) l('alice');
    await new Promise((r) => setTimeout(r, 100));
    expect(await remembered.find('a', claims)).toMatchObject({ status: 'RESTRICTED' });
    expect(questions).toBe(3);
    const asked = questions;
    await remembered.find('a', claims);
    expect(questions).toBe(asked);
    // Closing the account: asked again.
    remembered.forgetAccount('a');
    await remembered.find('a', claims);
    expect(questions).toBe(asked + 1);
    // Accounts stops hearing its database: within the stale time, nothing from memory.
    heard.serving = false;
    await new Promise((r) => setTimeout(r, 3100));
    expect(remembered.serving).toBe(false);
    await remembered.find('a', claims);
    expect(questions).toBe(asked + 2);
    announcer.close();
    await remembered.close();
    await log.close();
  }, 15_000);
});
