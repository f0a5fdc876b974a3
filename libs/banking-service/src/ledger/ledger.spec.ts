import Decimal from 'decimal.js';
import { bookCompletedDeposit } from '../funding/funding.service';
import { BookBalances1732230000040 } from '../migrations/1732230000040-book-balances';
import { BOOK_BALANCE_DRIFT_SQL, lockAccountCurrency, postEntry } from './ledger';
import { CANCEL, ENTITY, eventually, startBankingHarness, WITHDRAW, type BankingHarness } from '../testing/banking-harness';

describe('ledger under concurrent spends', () => {
  let h: BankingHarness;

  beforeAll(async () => {
    h = await startBankingHarness({ BANKING_CLEARING_DELAY_MS: '1500', BANKING_CLEARING_POLL_MS: '20' });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('never overdraws: 30 withdrawals and 30 holds race for cash that covers 20 of them', async () => {
    const account = h.openAccount('u');
    await bookCompletedDeposit(h.service.dataSource, account, 'USD', '1000', 'opening');
    const withdrawals = Array.from({ length: 30 }, (_, i) =>
      h.gql(WITHDRAW, { input: { accountId: account, amount: '50', currency: 'USD', reference: `w${i}` } }, { sub: 'u' }),
    );
    const holds = Array.from({ length: 30 }, (_, i) =>
      h.holds('POST', '', { orderId: `race-${i}`, accountId: account, currency: 'USD', amount: '50' }),
    );
    const [w, o] = await Promise.all([Promise.all(withdrawals), Promise.all(holds)]);

    const okWithdrawals = w.filter((r) => r.body.data?.withdraw);
    const okHolds = o.filter((r) => r.status === 201);
    expect(okWithdrawals.length + okHolds.length).toBe(20);
    for (const r of w.filter((r) => !r.body.data?.withdraw))
      expect(r.body.errors[0].extensions).toMatchObject({ code: 'UNPROCESSABLE', field: 'amount' });
    for (const r of o.filter((r) => r.status !== 201)) expect(r.body).toMatchObject({ status: 422, field: 'amount' });

    // Unwind a mix: cancel some withdrawals, release and capture some holds, let clearing pay the rest.
    let cancelled = 0;
    for (const r of okWithdrawals.slice(0, 3)) {
      // (On a slow machine clearing may have completed one first: then cancelling is a conflict.)
      if ((await h.gql(CANCEL, { id: r.body.data.withdraw.id }, { sub: 'u' })).body.data?.cancelFundingTransaction) cancelled++;
    }
    for (const r of okHolds.slice(0, 2)) await h.holds('POST', `/${r.body.orderId}/release`);
    for (const r of okHolds.slice(2, 4)) await h.holds('POST', `/${r.body.orderId}/capture`, { amount: '49.99' });
    await eventually(
      () => h.service.dataSource.query(`SELECT count(*)::int AS n FROM funding_transactions WHERE state = 'PENDING'`),
      (rows: Array<{ n: number }>) => rows[0]!.n === 0,
      10_000,
    );

    const settledWithdrawals = okWithdrawals.length - cancelled;
    const captured = Math.min(2, Math.max(0, okHolds.length - 2));
    const stillHeld = Math.max(0, okHolds.length - 4);
    const expectedCash = new Decimal(1000).minus(50 * settledWithdrawals).minus(new Decimal('49.99').times(captured));
    const res = await h.gql(
      ENTITY('balances { currency cash held availableToWithdraw }'),
      { r: [{ __typename: 'Account', id: account }] },
      { sub: 'u' },
    );
    expect(res.body.data._entities[0].balances).toEqual([
      {
        currency: 'USD',
        cash: expectedCash.toFixed(2),
        held: (50 * stillHeld).toFixed(2),
        availableToWithdraw: expectedCash.minus(50 * stillHeld).toFixed(2),
      },
    ]);
  });

  it('afterwards every entry balances, everything sums to zero, and every balance is the sum of its postings', async () => {
    expect(await h.ledgerInvariants()).toEqual({ unbalancedEntries: 0, total: '0.00000000', unbalancedAccounts: 0, driftedTotals: 0 });
    const books: Array<{ account_id: string; currency: string; cash: string; held: string; unsettled: string }> =
      await h.service.dataSource.query(
        `SELECT account_id, currency,
              coalesce(sum(amount) FILTER (WHERE book = 'CUSTOMER_CASH'), 0)::text AS cash,
              coalesce(sum(amount) FILTER (WHERE book = 'CUSTOMER_HELD'), 0)::text AS held,
              coalesce(sum(amount) FILTER (WHERE book = 'CUSTOMER_UNSETTLED'), 0)::text AS unsettled
         FROM postings GROUP BY account_id, currency`,
      );
    for (const b of books) {
      expect(new Decimal(b.cash).gte(0)).toBe(true); // free cash never went below zero
      expect(new Decimal(b.held).gte(0)).toBe(true);
      const res = await h.gql(
        ENTITY(`balance(currency: "${b.currency}") { cash held availableToWithdraw }`),
        { r: [{ __typename: 'Account', id: b.account_id }] },
        { sub: 'u' },
      );
      expect(res.body.data._entities[0].balance).toEqual({
        cash: new Decimal(b.cash).plus(b.held).plus(b.unsettled).toFixed(2),
        held: new Decimal(b.held).toFixed(2),
        availableToWithdraw: new Decimal(b.cash).toFixed(2),
      });
    }
    // Held cash is exactly what open holds and pending withdrawals reserve.
    const [{ held, reserved }] = await h.service.dataSource.query(
      `SELECT (SELECT coalesce(sum(amount), 0) FROM postings WHERE book = 'CUSTOMER_HELD')::text AS held,
              ((SELECT coalesce(sum(amount), 0) FROM holds WHERE state = 'HELD') + (SELECT coalesce(sum(amount), 0) FROM funding_transactions WHERE type = 'WITHDRAWAL' AND state = 'PENDING'))::text AS reserved`,
    );
    expect(new Decimal(held).eq(reserved)).toBe(true);
  });
});

describe('running totals (book_balances)', () => {
  let h: BankingHarness;
  beforeAll(async () => {
    h = await startBankingHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('never deadlock: holds, releases, captures and deposits on one account at once all go through', async () => {
    const account = h.openAccount('u');
    await bookCompletedDeposit(h.service.dataSource, account, 'USD', '100000', 'opening');
    const placed = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        h.holds('POST', '', { orderId: `dl-a-${i}`, accountId: account, currency: 'USD', amount: '10' }),
      ),
    );
    expect(placed.map((r) => r.status)).toEqual(Array(20).fill(201));
    const mixed = await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => h.holds('POST', `/dl-a-${i}/release`, { accountId: account })),
      ...Array.from({ length: 10 }, (_, i) => h.holds('POST', `/dl-a-${i + 10}/capture`, { amount: '9.5', accountId: account })),
      ...Array.from({ length: 20 }, (_, i) =>
        h.holds('POST', '', { orderId: `dl-b-${i}`, accountId: account, currency: 'USD', amount: '10' }),
      ),
    ]);
    expect(mixed.map((r) => r.status).filter((s) => s >= 300)).toEqual([]);
    await Promise.all(Array.from({ length: 10 }, (_, i) => bookCompletedDeposit(h.service.dataSource, account, 'USD', '1', `dl-${i}`)));
    expect(await h.ledgerInvariants()).toEqual({ unbalancedEntries: 0, total: '0.00000000', unbalancedAccounts: 0, driftedTotals: 0 });
  });

  it('follow every posting, refuse any change to a posting, and are rebuilt from the postings by the migration', async () => {
    const ds = h.service.dataSource;
    const account = h.openAccount('u');
    await bookCompletedDeposit(ds, account, 'USD', '1000', 'opening');
    expect((await h.holds('POST', '', { orderId: 'totals-1', accountId: account, currency: 'USD', amount: '250.50' })).status).toBe(201);
    const totals = async () =>
      (await ds.query(`SELECT book, amount::text AS amount FROM book_balances WHERE account_id = $1 ORDER BY book`, [account])) as Array<{
        book: string;
        amount: string;
      }>;
    expect(await totals()).toEqual([
      { book: 'BANK_CLEARING', amount: '-1000.00000000' },
      { book: 'CUSTOMER_CASH', amount: '749.50000000' },
      { book: 'CUSTOMER_HELD', amount: '250.50000000' },
    ]);
    // Postings are the record: not editable, not deletable (the totals could not follow).
    await expect(ds.query(`UPDATE postings SET amount = amount * 2 WHERE account_id = $1`, [account])).rejects.toThrow(/append-only/);
    await expect(ds.query(`DELETE FROM postings WHERE account_id = $1`, [account])).rejects.toThrow(/append-only/);

    // A database migrated before the totals existed gets them from its postings.
    const runner = ds.createQueryRunner();
    try {
      // As the migrations run: one transaction each.
      const migration = new BookBalances1732230000040();
      await runner.startTransaction();
      await migration.down(runner);
      await runner.commitTransaction();
      await runner.startTransaction();
      await migration.up(runner);
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
    expect(await totals()).toEqual([
      { book: 'BANK_CLEARING', amount: '-1000.00000000' },
      { book: 'CUSTOMER_CASH', amount: '749.50000000' },
      { book: 'CUSTOMER_HELD', amount: '250.50000000' },
    ]);
    expect(await h.ledgerInvariants()).toEqual({ unbalancedEntries: 0, total: '0.00000000', unbalancedAccounts: 0, driftedTotals: 0 });
  });
});

describe('journal entries', () => {
  let h: BankingHarness;
  beforeAll(async () => {
    h = await startBankingHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  const postingsOf = (entryId: string) =>
    h.service.dataSource.query(`SELECT book, amount::text AS amount FROM postings WHERE entry_id = $1 ORDER BY amount`, [entryId]);

  it('are refused unless they balance, naming the kind of entry and by how much it is off; nothing is booked', async () => {
    const ds = h.service.dataSource;
    const account = h.openAccount('u');
    await expect(
      ds.transaction((tx) =>
        postEntry(tx, {
          kind: 'DEPOSIT',
          description: 'off by five',
          accountId: account,
          currency: 'USD',
          legs: [
            { book: 'CUSTOMER_CASH', amount: '105' },
            { book: 'BANK_CLEARING', amount: '-100' },
          ],
        }),
      ),
    ).rejects.toThrow('journal entry DEPOSIT does not balance (5)');
    expect(await ds.query(`SELECT count(*)::int AS n FROM journal_entries WHERE description = 'off by five'`)).toEqual([{ n: 0 }]);
    expect(await ds.query(`SELECT count(*)::int AS n FROM postings WHERE account_id = $1`, [account])).toEqual([{ n: 0 }]);
  });

  it('book only the legs that move money: a zero leg is left out', async () => {
    const ds = h.service.dataSource;
    const account = h.openAccount('u');
    const entry = await ds.transaction((tx) =>
      postEntry(tx, {
        kind: 'DEPOSIT',
        description: 'with a zero leg',
        accountId: account,
        currency: 'USD',
        legs: [
          { book: 'CUSTOMER_CASH', amount: '10' },
          { book: 'CUSTOMER_HELD', amount: '0.00' },
          { book: 'BANK_CLEARING', amount: '-10' },
        ],
      }),
    );
    expect(await postingsOf(entry)).toEqual([
      { book: 'BANK_CLEARING', amount: '-10.00000000' },
      { book: 'CUSTOMER_CASH', amount: '10.00000000' },
    ]);
  });

  it('name the deposit or withdrawal, or the order hold, that caused them', async () => {
    const ds = h.service.dataSource;
    const account = h.openAccount('u');
    const deposit = await bookCompletedDeposit(ds, account, 'USD', '100', 'opening');
    expect(await ds.query(`SELECT kind FROM journal_entries WHERE funding_transaction_id = $1`, [deposit])).toEqual([{ kind: 'DEPOSIT' }]);
    expect((await h.holds('POST', '', { orderId: 'linked-1', accountId: account, currency: 'USD', amount: '40' })).status).toBe(201);
    expect((await h.holds('POST', '/linked-1/release', { accountId: account })).status).toBe(200);
    expect(await ds.query(`SELECT kind FROM journal_entries WHERE hold_order_id = 'linked-1' ORDER BY seq`)).toEqual([
      { kind: 'HOLD' },
      { kind: 'HOLD_RELEASE' },
    ]);
  });

  it("lock one account's cash in one currency only: bookings on other accounts and currencies go ahead, the same one waits", async () => {
    const ds = h.service.dataSource;
    const [locked, other] = [h.openAccount('u'), h.openAccount('u')];
    const runner = ds.createQueryRunner();
    await runner.startTransaction();
    let sameDone = false;
    let same: Promise<unknown> | undefined;
    try {
      await lockAccountCurrency(runner.manager, locked, 'USD');
      const within = <T>(p: Promise<T>) =>
        Promise.race([p.then(() => 'booked'), new Promise((r) => setTimeout(() => r('still waiting'), 5000).unref())]);
      expect(await within(bookCompletedDeposit(ds, other, 'USD', '1', 'other account'))).toBe('booked');
      expect(await within(bookCompletedDeposit(ds, locked, 'EUR', '1', 'other currency'))).toBe('booked');
      same = bookCompletedDeposit(ds, locked, 'USD', '1', 'same account and currency').then(() => (sameDone = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(sameDone).toBe(false);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
    await same;
    expect(sameDone).toBe(true);
  });

  it('a running total that disagrees with its postings is found by the drift check, naming the account, book and both sums', async () => {
    const ds = h.service.dataSource;
    const account = h.openAccount('u');
    await bookCompletedDeposit(ds, account, 'USD', '100', 'opening');
    const runner = ds.createQueryRunner();
    await runner.startTransaction();
    try {
      // Only inside this transaction, rolled back below: nothing else may ever write the totals.
      await runner.query(`UPDATE book_balances SET amount = amount + 1 WHERE account_id = $1 AND book = 'CUSTOMER_CASH'`, [account]);
      expect(await runner.query(BOOK_BALANCE_DRIFT_SQL)).toEqual([
        { account_id: account, book: 'CUSTOMER_CASH', currency: 'USD', total: '101.00000000', postings: '100.00000000' },
      ]);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
    expect(await ds.query(BOOK_BALANCE_DRIFT_SQL)).toEqual([]);
  });
});
