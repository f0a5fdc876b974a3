import { randomUUID } from 'node:crypto';
import { bookCompletedDeposit } from '../funding/funding.service';
import { CANCEL, DEPOSIT, ENTITY, startBankingHarness, WITHDRAW, type BankingHarness } from '../testing/banking-harness';

describe('banking ledger and balances', () => {
  let account: string;
  let h: BankingHarness;

  beforeAll(async () => {
    h = await startBankingHarness();
    account = h.openAccount('u');
  });
  afterAll(async () => {
    await h?.close();
  });

  const entity = (fields: string, claims: { sub: string; scope?: string[] } = { sub: 'u' }) =>
    h.gql(ENTITY(fields), { r: [{ __typename: 'Account', id: account }] }, claims);

  it('derives balances from balanced journal entries, exactly', async () => {
    await bookCompletedDeposit(h.service.dataSource, account, 'USD', '0.10', 'one');
    await bookCompletedDeposit(h.service.dataSource, account, 'USD', '0.20', 'two');
    await bookCompletedDeposit(h.service.dataSource, account, 'EUR', '5', 'three');
    const res = await entity('balances { currency cash settledCash unsettledCash held availableToTrade availableToWithdraw }');
    expect(res.body.data._entities[0].balances).toEqual([
      {
        currency: 'EUR',
        cash: '5.00',
        settledCash: '5.00',
        unsettledCash: '0.00',
        held: '0.00',
        availableToTrade: '5.00',
        availableToWithdraw: '5.00',
      },
      {
        currency: 'USD',
        cash: '0.30',
        settledCash: '0.30',
        unsettledCash: '0.00',
        held: '0.00',
        availableToTrade: '0.30',
        availableToWithdraw: '0.30',
      },
    ]);
    expect(await h.ledgerInvariants()).toEqual({ unbalancedEntries: 0, total: '0.00000000', unbalancedAccounts: 0, driftedTotals: 0 });
  });

  it('answers one currency, zeros for one never used, and refuses a code that is not ISO 4217', async () => {
    const res = await entity(
      'usd: balance(currency: "USD") { currency cash } chf: balance(currency: "CHF") { currency cash availableToWithdraw }',
    );
    expect(res.body.data._entities[0]).toEqual({
      usd: { currency: 'USD', cash: '0.30' },
      chf: { currency: 'CHF', cash: '0.00', availableToWithdraw: '0.00' },
    });
    const bad = await entity('balance(currency: "XYZ") { cash }');
    expect(bad.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'currency' });
  });

  it('lets PostgreSQL refuse an entry that does not balance', async () => {
    await expect(
      h.service.dataSource.transaction(async (tx) => {
        const [entry] = await tx.query(`INSERT INTO journal_entries (kind) VALUES ('BROKEN') RETURNING id`);
        await tx.query(
          `INSERT INTO postings (entry_id, account_id, book, currency, amount) VALUES ($1, $2, 'CUSTOMER_CASH', 'USD', 100), ($1, $2, 'BANK_CLEARING', 'USD', -99)`,
          [entry.id, account],
        );
      }),
    ).rejects.toThrow(/does not balance/);
    const [{ count }] = await h.service.dataSource.query(`SELECT count(*)::int AS count FROM journal_entries WHERE kind = 'BROKEN'`);
    expect(count).toBe(0);
  });

  it("attack: another user's representation of the account resolves to null through _entities, whatever is asked", async () => {
    for (const fields of [
      'balances { cash }',
      'balance(currency: "USD") { cash }',
      'cashActivity { nodes { id amount } }',
      'fundingTransactions { nodes { id } }',
    ]) {
      const res = await entity(fields, { sub: 'mallory' });
      expect(res.body.data._entities).toEqual([null]);
      expect(JSON.stringify(res.body)).not.toContain('0.30');
    }
    // A batch mixing the caller's own account and someone else's: only the caller's resolves.
    const own = h.openAccount('mallory');
    const mixed = await h.gql(
      ENTITY('balances { cash }'),
      {
        r: [
          { __typename: 'Account', id: account },
          { __typename: 'Account', id: own },
          { __typename: 'Account', id: randomUUID() },
        ],
      },
      { sub: 'mallory' },
    );
    expect(mixed.body.data._entities).toEqual([null, { balances: [] }, null]);
  });

  it('needs read:banking for every Account field', async () => {
    for (const fields of [
      'balances { cash }',
      'balance(currency: "USD") { cash }',
      'cashActivity { nodes { id } }',
      'fundingTransactions { nodes { id } }',
    ]) {
      const res = await entity(fields, { sub: 'u', scope: ['read:accounts'] });
      expect(res.body.errors[0].extensions.code).toBe('INSUFFICIENT_SCOPE');
    }
  });
});

describe('balances: pending deposits and withdrawals', () => {
  let h: BankingHarness;
  let account: string;

  beforeAll(async () => {
    // Nothing clears during these tests: the e2e banking spec watches clearing move pendingIn into cash.
    h = await startBankingHarness({ BANKING_CLEARING_DELAY_MS: '600000' });
    account = h.openAccount('p');
  });
  afterAll(async () => {
    await h?.close();
  });

  const BALANCE = '{ currency cash held availableToWithdraw pendingIn pendingOut }';
  const read = async (fields: string) =>
    (await h.gql(ENTITY(fields), { r: [{ __typename: 'Account', id: account }] }, { sub: 'p' })).body.data._entities[0];
  const fund = async (mutation: string, amount: string, currency = 'USD') =>
    (await h.gql(mutation, { input: { accountId: account, amount, currency } }, { sub: 'p' })).body.data;

  it('adds up PENDING deposits exactly as pendingIn, outside cash, in every currency with any (also one never booked)', async () => {
    await bookCompletedDeposit(h.service.dataSource, account, 'USD', '100', 'opening');
    await fund(DEPOSIT, '0.10');
    await fund(DEPOSIT, '0.20');
    await fund(DEPOSIT, '1000', 'JPY');
    expect((await read(`balances ${BALANCE}`)).balances).toEqual([
      { currency: 'JPY', cash: '0', held: '0', availableToWithdraw: '0', pendingIn: '1000', pendingOut: '0' },
      { currency: 'USD', cash: '100.00', held: '0.00', availableToWithdraw: '100.00', pendingIn: '0.30', pendingOut: '0.00' },
    ]);
    expect((await read(`balance(currency: "JPY") ${BALANCE}`)).balance).toMatchObject({ cash: '0', pendingIn: '1000' });
    expect((await read(`balance(currency: "CHF") ${BALANCE}`)).balance).toEqual({
      currency: 'CHF',
      cash: '0.00',
      held: '0.00',
      availableToWithdraw: '0.00',
      pendingIn: '0.00',
      pendingOut: '0.00',
    });
  });

  it('shows a PENDING withdrawal as pendingOut (still in cash, held), and neither once cancelled', async () => {
    const { withdraw } = await fund(WITHDRAW, '40.05');
    expect((await read(`balance(currency: "USD") ${BALANCE}`)).balance).toEqual({
      currency: 'USD',
      cash: '100.00',
      held: '40.05',
      availableToWithdraw: '59.95',
      pendingIn: '0.30',
      pendingOut: '40.05',
    });
    await h.gql(CANCEL, { id: withdraw.id }, { sub: 'p' });
    expect((await read(`balance(currency: "USD") ${BALANCE}`)).balance).toMatchObject({
      held: '0.00',
      pendingOut: '0.00',
      pendingIn: '0.30',
    });
  });
});
