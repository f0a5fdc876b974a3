import { randomUUID } from 'node:crypto';
import { bookCompletedDeposit } from '../funding/funding.service';
import { ENTITY, startBankingHarness, type BankingHarness } from '../testing/banking-harness';
import { SaleSettlements, settlementDate } from './sale-settlement';
import { SettlementService } from './settlement.service';

describe('settlement dates', () => {
  it('counts business days: T+1 from Friday is Monday, from Monday is Tuesday; T+0 is the trade date', () => {
    expect(settlementDate(new Date('2026-11-20T15:00:00Z'), 1)).toBe('2026-11-23'); // Friday → Monday
    expect(settlementDate(new Date('2026-11-23T15:00:00Z'), 1)).toBe('2026-11-24');
    expect(settlementDate(new Date('2026-11-21T10:00:00Z'), 1)).toBe('2026-11-23'); // a Saturday fill (paper market) → Monday
    expect(settlementDate(new Date('2026-11-19T23:59:00Z'), 2)).toBe('2026-11-23'); // Thursday T+2 → Monday
    expect(settlementDate(new Date('2026-11-20T15:00:00Z'), 0)).toBe('2026-11-20');
  });
});

describe('sale proceeds', () => {
  let h: BankingHarness;
  let sales: SaleSettlements;
  let settlement: SettlementService;

  beforeAll(async () => {
    // The app's own clearing pass (which also settles sales) stays out of the way: this spec settles by hand.
    h = await startBankingHarness({ BANKING_CLEARING_POLL_MS: '86400000' });
    sales = new SaleSettlements(h.service.dataSource, 1);
    settlement = new SettlementService(h.service.dataSource, sales);
  });
  afterAll(async () => {
    await h?.close();
  });

  const sell = async (accountId: string, executedAt: string, grossAmount: string, commission: string) => {
    const id = randomUUID();
    await settlement.apply({
      eventId: randomUUID(),
      entryId: '0-1',
      type: 'trade.executed',
      payload: {
        trade: {
          id,
          orderId: `sell-${id}`,
          accountId,
          symbol: 'AAPL',
          side: 'SELL',
          quantity: '1',
          price: grossAmount,
          currency: 'USD',
          grossAmount,
          commission,
          executedAt,
        },
      },
    });
    return id;
  };
  const balance = async (account: string) =>
    (
      await h.gql(
        ENTITY('balance(currency: "USD") { cash settledCash unsettledCash availableToTrade availableToWithdraw }'),
        { r: [{ __typename: 'Account', id: account }] },
        { sub: 'u' },
      )
    ).body.data._entities[0].balance;
  const scheduled = async (account: string) =>
    h.service.dataSource.query(
      `SELECT trade_id, currency, amount::text, to_char(settle_on, 'YYYY-MM-DD') AS settle_on, settled_at IS NOT NULL AS settled
         FROM sale_settlements WHERE account_id = $1 ORDER BY settle_on`,
      [account],
    );

  it('settle on the next business day after the trade date, not the same day and not a day later; until then they can be traded, not withdrawn', async () => {
    const account = h.openAccount('u');
    const thursday = await sell(account, '2024-03-07T20:59:00Z', '1000', '1');
    const friday = await sell(account, '2024-03-08T14:30:00Z', '500', '0');
    const today = await sell(account, new Date().toISOString(), '200', '0');
    expect(await scheduled(account)).toEqual([
      { trade_id: thursday, currency: 'USD', amount: '999.00000000', settle_on: '2024-03-08', settled: false }, // Thursday → Friday
      { trade_id: friday, currency: 'USD', amount: '500.00000000', settle_on: '2024-03-11', settled: false }, // Friday → Monday
      { trade_id: today, currency: 'USD', amount: '200.00000000', settle_on: settlementDate(new Date(), 1), settled: false },
    ]);
    expect(await balance(account)).toEqual({
      cash: '1699.00',
      settledCash: '0.00',
      unsettledCash: '1699.00',
      availableToTrade: '1699.00',
      availableToWithdraw: '0.00',
    });

    // The two whose date has come settle, each once; today's sale waits for its date.
    expect(await sales.settleDue()).toBe(2);
    expect(await scheduled(account)).toEqual([
      expect.objectContaining({ trade_id: thursday, settled: true }),
      expect.objectContaining({ trade_id: friday, settled: true }),
      expect.objectContaining({ trade_id: today, settled: false }),
    ]);
    expect(await balance(account)).toEqual({
      cash: '1699.00',
      settledCash: '1499.00',
      unsettledCash: '200.00',
      availableToTrade: '1699.00',
      availableToWithdraw: '1499.00',
    });
    expect(await sales.settleDue()).toBe(0);
    expect(await balance(account)).toMatchObject({ settledCash: '1499.00', unsettledCash: '200.00' });
  });

  it('settle a sale whose commission took all its proceeds, and do not let it hold up the sales after it', async () => {
    const account = h.openAccount('u');
    const nothingLeft = await sell(account, '2024-03-04T15:00:00Z', '1.00', '1.00');
    const next = await sell(account, '2024-03-05T15:00:00Z', '30', '0');
    expect(await sales.settleDue()).toBe(2);
    expect(await scheduled(account)).toEqual([
      expect.objectContaining({ trade_id: nothingLeft, amount: '0.00000000', settled: true }),
      expect.objectContaining({ trade_id: next, settled: true }),
    ]);
    expect(await balance(account)).toMatchObject({ settledCash: '30.00', unsettledCash: '0.00' });
    expect(await h.ledgerInvariants()).toEqual({ unbalancedEntries: 0, total: '0.00000000', unbalancedAccounts: 0, driftedTotals: 0 });
  });

  it('move each sale from unsettled to free cash in an entry of its own, naming the trade', async () => {
    const account = h.openAccount('u');
    await bookCompletedDeposit(h.service.dataSource, account, 'USD', '10', 'opening');
    const trade = await sell(account, '2024-03-11T15:00:00Z', '250.50', '0.50');
    expect(await sales.settleDue()).toBe(1);
    const entries = await h.service.dataSource.query(
      `SELECT e.kind, e.description, p.book, p.currency, p.amount::text AS amount
         FROM journal_entries e JOIN postings p ON p.entry_id = e.id
        WHERE p.account_id = $1 AND e.kind = 'SETTLEMENT' ORDER BY p.amount`,
      [account],
    );
    const description = `Sale proceeds settled (trade ${trade})`;
    expect(entries).toEqual([
      { kind: 'SETTLEMENT', description, book: 'CUSTOMER_UNSETTLED', currency: 'USD', amount: '-250.00000000' },
      { kind: 'SETTLEMENT', description, book: 'CUSTOMER_CASH', currency: 'USD', amount: '250.00000000' },
    ]);
    expect(await balance(account)).toMatchObject({ settledCash: '260.00', unsettledCash: '0.00', availableToWithdraw: '260.00' });
    expect(await h.ledgerInvariants()).toEqual({ unbalancedEntries: 0, total: '0.00000000', unbalancedAccounts: 0, driftedTotals: 0 });
  });
});
