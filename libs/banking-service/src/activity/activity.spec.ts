import { bookCompletedDeposit } from '../funding/funding.service';
import { ENTITY, eventually, startBankingHarness, WITHDRAW, type BankingHarness } from '../testing/banking-harness';

describe('cash activity', () => {
  let h: BankingHarness;
  let account: string;

  beforeAll(async () => {
    h = await startBankingHarness({ BANKING_CLEARING_DELAY_MS: '0', BANKING_CLEARING_POLL_MS: '20' });
    account = h.openAccount('u');
    for (const [ccy, amount] of [
      ['USD', '100'],
      ['EUR', '50'],
      ['USD', '20.5'],
    ] as const)
      await bookCompletedDeposit(h.service.dataSource, account, ccy, amount, `deposit ${ccy} ${amount}`);
    const w = await h.gql(WITHDRAW, { input: { accountId: account, amount: '30', currency: 'USD', reference: 'rent' } }, { sub: 'u' });
    expect(w.body.data.withdraw.state).toBe('PENDING');
    await eventually(
      () => list(''),
      (r) => r.body.data?._entities[0].cashActivity.nodes.length === 4,
    );
  });
  afterAll(async () => {
    await h?.close();
  });

  const FIELDS = 'nodes { id type currency amount balanceAfter description transactionId occurredAt } nextCursor';
  const list = (args: string, id = account) =>
    h.gql(ENTITY(`cashActivity${args} { ${FIELDS} }`), { r: [{ __typename: 'Account', id }] }, { sub: 'u' });
  const page = async (args: string) => (await list(args)).body.data._entities[0].cashActivity;

  it('lists every cash movement newest first with a running balance per currency', async () => {
    const all = await page('');
    expect(all.nodes.map((n: any) => [n.type, n.currency, n.amount, n.balanceAfter, n.description])).toEqual([
      ['WITHDRAWAL', 'USD', '-30.00', '90.50', 'Withdrawal: rent'],
      ['DEPOSIT', 'USD', '20.50', '120.50', 'deposit USD 20.5'],
      ['DEPOSIT', 'EUR', '50.00', '50.00', 'deposit EUR 50'],
      ['DEPOSIT', 'USD', '100.00', '100.00', 'deposit USD 100'],
    ]);
    expect(all.nodes[0].transactionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(all.nextCursor).toBeNull();
  });

  it('pages with signed cursors and filters by type and date', async () => {
    const first = await page('(limit: 3)');
    expect(first.nodes).toHaveLength(3);
    const second = await page(`(limit: 3, cursor: "${first.nextCursor}")`);
    expect(second.nodes.map((n: any) => n.description)).toEqual(['deposit USD 100']);
    expect(second.nextCursor).toBeNull();
    expect((await page('(type: WITHDRAWAL)')).nodes).toHaveLength(1);
    expect((await page('(type: DEPOSIT, limit: 1)')).nodes[0].description).toBe('deposit USD 20.5');
    expect((await page('(from: "2000-01-01", to: "2000-01-02")')).nodes).toEqual([]);
    const today = new Date().toISOString().slice(0, 10);
    expect((await page(`(from: "${today}", to: "${today}")`)).nodes).toHaveLength(4);

    const [body, mac] = first.nextCursor.split('.');
    const tampered = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), s: '999999' })).toString(
      'base64url',
    );
    for (const cursor of [`${tampered}.${mac}`, 'garbage']) {
      expect((await list(`(cursor: "${cursor}")`)).body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'cursor' });
    }
    // A genuine cursor from another account's list is refused too.
    const other = h.openAccount('u');
    expect((await list(`(cursor: "${first.nextCursor}")`, other)).body.errors[0].extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'cursor',
    });
  });
});
