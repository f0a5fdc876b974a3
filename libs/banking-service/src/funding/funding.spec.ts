import { randomUUID } from 'node:crypto';
import { CursorCodec } from '@trading/pagination';
import { bookCompletedDeposit, FundingService, SANDBOX_REJECT_REASON } from './funding.service';
import { CANCEL, DEPOSIT, ENTITY, eventually, startBankingHarness, WITHDRAW, type BankingHarness } from '../testing/banking-harness';

describe('funding transactions', () => {
  let h: BankingHarness;
  const alice = 'user-alice';
  const bob = 'user-bob';

  beforeAll(async () => {
    // Long enough that a test can act on a PENDING transaction, short enough to watch clearing.
    h = await startBankingHarness({ BANKING_CLEARING_DELAY_MS: '1000', BANKING_CLEARING_POLL_MS: '50' });
  });
  afterAll(async () => {
    await h?.close();
  });

  const as = (sub: string, extra: Record<string, unknown> = {}) => ({ sub, ...extra });
  const balance = async (accountId: string, currency = 'USD') =>
    (
      await h.gql(
        ENTITY(`balance(currency: "${currency}") { cash held availableToTrade availableToWithdraw }`),
        { r: [{ __typename: 'Account', id: accountId }] },
        as(alice),
      )
    ).body.data._entities[0].balance;
  const transactions = async (accountId: string, args = '') =>
    (
      await h.gql(
        ENTITY(`fundingTransactions${args} { nodes { id type state amount } nextCursor }`),
        { r: [{ __typename: 'Account', id: accountId }] },
        as(alice),
      )
    ).body.data._entities[0].fundingTransactions;
  const errorOf = (res: { body: any }) => res.body.errors?.[0]?.extensions;

  it('deposits: PENDING moves no money, clearing completes it and credits the cash', async () => {
    const account = h.openAccount(alice);
    const res = await h.gql(DEPOSIT, { input: { accountId: account, amount: '250.5', currency: 'USD', reference: 'salary' } }, as(alice));
    const tx = res.body.data.deposit;
    expect(tx).toMatchObject({
      accountId: account,
      type: 'DEPOSIT',
      state: 'PENDING',
      amount: '250.50',
      currency: 'USD',
      reference: 'salary',
      completedAt: null,
    });
    expect(tx.createdAt).toMatch(/Z$/);
    expect((await balance(account)).cash).toBe('0.00');

    const list = await eventually(
      () => transactions(account),
      (t) => t.nodes[0]?.state === 'COMPLETED',
    );
    expect(list.nodes).toEqual([{ id: tx.id, type: 'DEPOSIT', state: 'COMPLETED', amount: '250.50' }]);
    expect(await balance(account)).toEqual({ cash: '250.50', held: '0.00', availableToTrade: '250.50', availableToWithdraw: '250.50' });
  });

  it('withdrawals hold the amount at once, refuse more than available to withdraw, and pay out on completion', async () => {
    const account = h.openAccount(alice);
    await bookCompletedDeposit(h.service.dataSource, account, 'USD', '100', 'opening');
    const tooMuch = await h.gql(WITHDRAW, { input: { accountId: account, amount: '100.01', currency: 'USD' } }, as(alice));
    expect(errorOf(tooMuch)).toMatchObject({ code: 'UNPROCESSABLE', field: 'amount' });

    const res = await h.gql(WITHDRAW, { input: { accountId: account, amount: '60', currency: 'USD' } }, as(alice));
    expect(res.body.data.withdraw).toMatchObject({ type: 'WITHDRAWAL', state: 'PENDING', amount: '60.00' });
    expect(await balance(account)).toEqual({ cash: '100.00', held: '60.00', availableToTrade: '40.00', availableToWithdraw: '40.00' });
    const second = await h.gql(WITHDRAW, { input: { accountId: account, amount: '40.01', currency: 'USD' } }, as(alice));
    expect(errorOf(second)).toMatchObject({ code: 'UNPROCESSABLE', field: 'amount' });

    await eventually(
      () => transactions(account),
      (t) => t.nodes[0]?.state === 'COMPLETED',
    );
    expect(await balance(account)).toEqual({ cash: '40.00', held: '0.00', availableToTrade: '40.00', availableToWithdraw: '40.00' });
  });

  it('cancels only a PENDING transaction: the hold is released, a second cancel is harmless, a completed one is a conflict', async () => {
    const account = h.openAccount(alice);
    await bookCompletedDeposit(h.service.dataSource, account, 'USD', '100', 'opening');
    const w = (await h.gql(WITHDRAW, { input: { accountId: account, amount: '30', currency: 'USD' } }, as(alice))).body.data.withdraw;
    const cancelled = (await h.gql(CANCEL, { id: w.id }, as(alice))).body.data.cancelFundingTransaction;
    expect(cancelled).toMatchObject({ id: w.id, state: 'CANCELLED', completedAt: null });
    expect(cancelled.cancelledAt).toBeTruthy();
    expect(await balance(account)).toMatchObject({ cash: '100.00', held: '0.00', availableToWithdraw: '100.00' });
    expect((await h.gql(CANCEL, { id: w.id }, as(alice))).body.data.cancelFundingTransaction).toEqual(cancelled);

    const d = (await h.gql(DEPOSIT, { input: { accountId: account, amount: '5', currency: 'USD' } }, as(alice))).body.data.deposit;
    await eventually(
      () => transactions(account),
      (t) => t.nodes[0]?.state === 'COMPLETED',
    );
    expect(errorOf(await h.gql(CANCEL, { id: d.id }, as(alice)))).toMatchObject({ code: 'CONFLICT', field: 'transactionId' });
    // Clearing never touched the cancelled one.
    expect((await transactions(account, '(state: CANCELLED)')).nodes).toEqual([
      { id: w.id, type: 'WITHDRAWAL', state: 'CANCELLED', amount: '30.00' },
    ]);
    expect(await balance(account)).toMatchObject({ cash: '105.00' });
  });

  it("lets the sandbox force a rejection, which releases a withdrawal's hold", async () => {
    const account = h.openAccount(alice);
    await bookCompletedDeposit(h.service.dataSource, account, 'USD', '50', 'opening');
    await h.gql(WITHDRAW, { input: { accountId: account, amount: '50', currency: 'USD', sandboxOutcome: 'REJECTED' } }, as(alice));
    await h.gql(DEPOSIT, { input: { accountId: account, amount: '10', currency: 'USD', sandboxOutcome: 'REJECTED' } }, as(alice));
    const list = await eventually(
      () =>
        h.gql(
          ENTITY('fundingTransactions(state: REJECTED) { nodes { type rejectReason rejectedAt } }'),
          { r: [{ __typename: 'Account', id: account }] },
          as(alice),
        ),
      (r) => r.body.data._entities[0].fundingTransactions.nodes.length === 2,
    );
    expect(list.body.data._entities[0].fundingTransactions.nodes).toEqual([
      { type: 'DEPOSIT', rejectReason: SANDBOX_REJECT_REASON, rejectedAt: expect.any(String) },
      { type: 'WITHDRAWAL', rejectReason: SANDBOX_REJECT_REASON, rejectedAt: expect.any(String) },
    ]);
    expect(await balance(account)).toEqual({ cash: '50.00', held: '0.00', availableToTrade: '50.00', availableToWithdraw: '50.00' });
  });

  it('refuses sandboxOutcome when the sandbox is off', async () => {
    const service = new FundingService(
      h.service.dataSource,
      { find: async () => null, ownedIds: async () => [], close: async () => undefined },
      new CursorCodec(h.secret),
      { clearingDelayMs: 0, sandbox: false, maxTransactionAmount: '10000000' },
    );
    await expect(
      service.deposit(
        { claims: { sub: alice, sid: 's', kind: 'pat', scope: [] } },
        { accountId: randomUUID(), amount: '1', currency: 'USD', sandboxOutcome: 'COMPLETED' },
        null,
      ),
    ).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'sandboxOutcome',
    });
  });

  it("acts only on the caller's own accounts and transactions", async () => {
    const account = h.openAccount(alice);
    await bookCompletedDeposit(h.service.dataSource, account, 'USD', '10', 'opening');
    expect(errorOf(await h.gql(DEPOSIT, { input: { accountId: account, amount: '1', currency: 'USD' } }, as(bob)))).toMatchObject({
      code: 'NOT_FOUND',
      field: 'accountId',
    });
    expect(errorOf(await h.gql(WITHDRAW, { input: { accountId: randomUUID(), amount: '1', currency: 'USD' } }, as(alice)))).toMatchObject({
      code: 'NOT_FOUND',
      field: 'accountId',
    });
    const w = (await h.gql(WITHDRAW, { input: { accountId: account, amount: '1', currency: 'USD' } }, as(alice))).body.data.withdraw;
    expect(errorOf(await h.gql(CANCEL, { id: w.id }, as(bob)))).toMatchObject({ code: 'NOT_FOUND', field: 'transactionId' });
    expect(errorOf(await h.gql(CANCEL, { id: randomUUID() }, as(alice)))).toMatchObject({ code: 'NOT_FOUND', field: 'transactionId' });
    const closed = h.openAccount(alice, 'CLOSED');
    expect(errorOf(await h.gql(DEPOSIT, { input: { accountId: closed, amount: '1', currency: 'USD' } }, as(alice)))).toMatchObject({
      code: 'UNPROCESSABLE',
      field: 'accountId',
    });
  });

  it('names the field of every bad input, never a 500', async () => {
    const account = h.openAccount(alice);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ accountId: account, amount: '1', currency: 'XXX' }, 'currency'],
      [{ accountId: account, amount: '1', currency: 'usdollar' }, 'currency'],
      [{ accountId: account, amount: '0', currency: 'USD' }, 'amount'],
      [{ accountId: account, amount: '-5', currency: 'USD' }, 'amount'],
      [{ accountId: account, amount: '1.001', currency: 'USD' }, 'amount'],
      [{ accountId: account, amount: '1.5', currency: 'JPY' }, 'amount'],
      [{ accountId: account, amount: '1e3', currency: 'USD' }, 'amount'],
      [{ accountId: account, amount: '1234567890123456', currency: 'USD' }, 'amount'],
      // 13 to 15 integer digits passed before and overflowed numeric(20, 8) with a 500.
      [{ accountId: account, amount: '1234567890123', currency: 'USD' }, 'amount'],
      [{ accountId: account, amount: '999999999999999', currency: 'USD' }, 'amount'],
      [{ accountId: 'not-a-uuid', amount: '1', currency: 'USD' }, 'accountId'],
      [{ accountId: account, amount: '1', currency: 'USD', reference: 'x'.repeat(141) }, 'reference'],
    ];
    for (const [input, field] of cases) {
      expect([input, errorOf(await h.gql(DEPOSIT, { input }, as(alice)))]).toEqual([
        input,
        expect.objectContaining({ code: 'BAD_USER_INPUT', field }),
      ]);
    }
    // Storable, but above what one transaction may move.
    for (const mutation of [DEPOSIT, WITHDRAW]) {
      expect(
        errorOf(await h.gql(mutation, { input: { accountId: account, amount: '10000000.01', currency: 'USD' } }, as(alice))),
      ).toMatchObject({ code: 'UNPROCESSABLE', field: 'amount' });
    }
    expect(errorOf(await h.gql(CANCEL, { id: '42' }, as(alice)))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'transactionId' });
    expect(
      errorOf(await h.gql(DEPOSIT, { input: { accountId: account, amount: '1', currency: 'USD' }, key: '' }, as(alice))),
    ).toMatchObject({ code: 'BAD_USER_INPUT', field: 'idempotencyKey' });
    expect(
      errorOf(await h.gql(DEPOSIT, { input: { accountId: account, amount: '1', currency: 'USD' }, key: 'k'.repeat(256) }, as(alice))),
    ).toMatchObject({ code: 'BAD_USER_INPUT', field: 'idempotencyKey' });
    for (const [args, field] of [
      ['(limit: 0)', 'limit'],
      ['(limit: 101)', 'limit'],
      ['(cursor: "abc.def")', 'cursor'],
      ['(from: "yesterday")', 'from'],
      ['(from: "2026-02-01", to: "2026-01-01")', 'from'],
    ]) {
      const res = await h.gql(
        ENTITY(`fundingTransactions${args} { nodes { id } }`),
        { r: [{ __typename: 'Account', id: account }] },
        as(alice),
      );
      expect(errorOf(res)).toMatchObject({ code: 'BAD_USER_INPUT', field });
    }
    // Nothing was booked by any of it.
    expect((await transactions(account)).nodes).toEqual([]);
  });

  it('needs write:banking and a READ_WRITE session for the mutations', async () => {
    const account = h.openAccount(alice);
    const input = { accountId: account, amount: '1', currency: 'USD' };
    expect(errorOf(await h.gql(DEPOSIT, { input }, as(alice, { scope: ['read:banking'] })))).toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
    expect(errorOf(await h.gql(CANCEL, { id: randomUUID() }, as(alice, { scope: ['read:banking'] })))).toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
    });
    expect(errorOf(await h.gql(WITHDRAW, { input }, as(alice, { access: 'READ_ONLY' })))).toMatchObject({ code: 'READ_ONLY_TOKEN' });
    // write:banking alone is enough: the ownership check does not need the caller's read:accounts.
    expect((await h.gql(DEPOSIT, { input }, as(alice, { scope: ['write:banking'] }))).body.data.deposit.state).toBe('PENDING');
  });

  describe('idempotency keys', () => {
    it('answers a retry with the first result and refuses the key for another request', async () => {
      const account = h.openAccount(alice);
      const input = { accountId: account, amount: '12.00', currency: 'USD' };
      const first = (await h.gql(DEPOSIT, { input, key: 'dep-1' }, as(alice))).body.data.deposit;
      const again = (await h.gql(DEPOSIT, { input: { ...input, amount: '12' }, key: 'dep-1' }, as(alice))).body.data.deposit;
      expect(again).toEqual(first);
      expect(errorOf(await h.gql(DEPOSIT, { input: { ...input, amount: '13' }, key: 'dep-1' }, as(alice)))).toMatchObject({
        code: 'UNPROCESSABLE',
        field: 'idempotencyKey',
      });
      expect(errorOf(await h.gql(WITHDRAW, { input, key: 'dep-1' }, as(alice)))).toMatchObject({
        code: 'UNPROCESSABLE',
        field: 'idempotencyKey',
      });
      // Keys are per user: bob's dep-1 is his own (and his request is refused for ownership, not the key).
      expect(errorOf(await h.gql(DEPOSIT, { input, key: 'dep-1' }, as(bob)))).toMatchObject({ code: 'NOT_FOUND', field: 'accountId' });
      expect((await transactions(account)).nodes).toHaveLength(1);

      const cancelled = (await h.gql(CANCEL, { id: first.id, key: 'cancel-1' }, as(alice))).body.data.cancelFundingTransaction;
      expect((await h.gql(CANCEL, { id: first.id, key: 'cancel-1' }, as(alice))).body.data.cancelFundingTransaction).toEqual(cancelled);
    });

    it('a refused request does not use up its key', async () => {
      const account = h.openAccount(alice);
      const input = { accountId: account, amount: '5', currency: 'USD' };
      expect(errorOf(await h.gql(WITHDRAW, { input, key: 'w-1' }, as(alice)))).toMatchObject({ code: 'UNPROCESSABLE', field: 'amount' });
      await bookCompletedDeposit(h.service.dataSource, account, 'USD', '5', 'opening');
      expect((await h.gql(WITHDRAW, { input, key: 'w-1' }, as(alice))).body.data.withdraw.state).toBe('PENDING');
    });

    it('lets 20 concurrent duplicates have exactly one effect', async () => {
      const account = h.openAccount(alice);
      await bookCompletedDeposit(h.service.dataSource, account, 'USD', '100', 'opening');
      const input = { accountId: account, amount: '10', currency: 'USD' };
      const results = await Promise.all(Array.from({ length: 20 }, () => h.gql(WITHDRAW, { input, key: 'burst' }, as(alice))));
      const ids = new Set(results.map((r) => r.body.data?.withdraw?.id));
      expect(ids.size).toBe(1);
      expect([...ids][0]).toBeTruthy();
      expect((await transactions(account)).nodes).toHaveLength(2);
      expect(await balance(account)).toMatchObject({ held: '10.00', availableToWithdraw: '90.00' });
    });
  });

  it('settles each due transaction exactly once, however many clearing workers race', async () => {
    const account = h.openAccount(alice);
    const active = {
      find: async () => ({ id: account, type: 'CASH' as const, baseCurrency: 'USD', status: 'ACTIVE' as const }),
      ownedIds: async () => [account],
      close: async () => undefined,
    };
    const other = new FundingService(h.service.dataSource, active, new CursorCodec(h.secret), {
      clearingDelayMs: 0,
      sandbox: true,
      maxTransactionAmount: '10000000',
    });
    for (let i = 0; i < 12; i++)
      await other.deposit(
        { claims: { sub: alice, sid: 's', kind: 'pat', scope: [] } },
        { accountId: account, amount: '1', currency: 'USD' },
        null,
      );
    const settled = await Promise.all([other.clearDue(), other.clearDue(), other.clearDue()]);
    await eventually(
      () => transactions(account, '(state: PENDING)'),
      (t) => t.nodes.length === 0,
    );
    expect(settled.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(12);
    const [{ entries }] = await h.service.dataSource.query(
      `SELECT count(*)::int AS entries FROM journal_entries e JOIN funding_transactions f ON f.id = e.funding_transaction_id WHERE f.account_id = $1`,
      [account],
    );
    expect(entries).toBe(12);
    expect(await balance(account)).toMatchObject({ cash: '12.00' });
  });

  it('leaves a ledger in which everything balances', async () => {
    expect(await h.ledgerInvariants()).toEqual({ unbalancedEntries: 0, total: '0.00000000', unbalancedAccounts: 0, driftedTotals: 0 });
  });
});
