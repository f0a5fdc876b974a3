import { randomUUID } from 'node:crypto';
import { settlementShapeProblem, type DeliveredEvent } from '@trading/events';
import { bookCompletedDeposit } from '../funding/funding.service';
import { ENTITY, startBankingHarness, type BankingHarness } from '../testing/banking-harness';
import { SaleSettlements } from './sale-settlement';
import { SettlementService } from './settlement.service';

describe('a buy order brought down to a smaller quantity (order.reduced)', () => {
  let h: BankingHarness;
  let settlement: SettlementService;

  beforeAll(async () => {
    h = await startBankingHarness({ BANKING_CLEARING_POLL_MS: '86400000' });
    settlement = new SettlementService(h.service.dataSource, new SaleSettlements(h.service.dataSource, 1));
  });
  afterAll(async () => {
    await h?.close();
  });

  /** An account with 1000 USD and a hold of 100 for `orderId`. */
  const holding = async (orderId: string) => {
    const account = h.openAccount('u');
    await bookCompletedDeposit(h.service.dataSource, account, 'USD', '1000', 'opening');
    expect((await h.holds('POST', '', { orderId, accountId: account, currency: 'USD', amount: '100' })).status).toBe(201);
    return account;
  };
  const event = (type: string, payload: Record<string, unknown>): DeliveredEvent => {
    const eventId = randomUUID();
    const full = { eventId, occurredAt: new Date().toISOString(), type, ...payload };
    return { eventId, entryId: '0-1', type, payload: full, payloadJson: JSON.stringify(full) };
  };
  const reduced = (orderId: string, accountId: string, settledAmount: string, holdAmount: string) =>
    event('order.reduced', {
      order: { id: orderId, accountId, side: 'BUY', currency: 'USD', quantity: '6', filledQuantity: '1', settledAmount, holdAmount },
    });
  /** A buy fill of the order: 30 gross and 1 commission. */
  const fill = (orderId: string, accountId: string) =>
    event('trade.executed', {
      trade: {
        id: randomUUID(),
        orderId,
        accountId,
        symbol: 'AAPL',
        side: 'BUY',
        quantity: '1',
        price: '30',
        currency: 'USD',
        grossAmount: '30',
        commission: '1',
        netAmount: '-31',
        executedAt: new Date().toISOString(),
      },
    });
  const closed = (orderId: string, accountId: string, status: string, settledAmount: string) =>
    event('order.closed', {
      order: { id: orderId, accountId, side: 'BUY', status, currency: 'USD', holdAmount: '100', filledQuantity: '1', settledAmount },
    });
  const balance = async (account: string) =>
    (
      await h.gql(
        ENTITY('balance(currency: "USD") { cash held availableToTrade }'),
        { r: [{ __typename: 'Account', id: account }] },
        { sub: 'u' },
      )
    ).body.data._entities[0].balance;
  const hold = async (orderId: string) =>
    (
      await h.service.dataSource.query('SELECT amount::text, state, settled_amount::text AS settled FROM holds WHERE order_id = $1', [
        orderId,
      ])
    )[0];
  const releases = (orderId: string) =>
    h.service.dataSource.query(
      `SELECT e.description, p.book, p.amount::text FROM journal_entries e JOIN postings p ON p.entry_id = e.id
        WHERE e.hold_order_id = $1 AND e.kind = 'HOLD_RELEASE' ORDER BY e.seq, p.amount`,
      [orderId],
    );

  it('gives back what the remainder no longer needs, once: the hold keeps what the fills settled plus the new hold', async () => {
    const orderId = randomUUID();
    const account = await holding(orderId);
    await settlement.apply(fill(orderId, account));
    expect(await balance(account)).toEqual({ cash: '969.00', held: '69.00', availableToTrade: '900.00' });

    const once = reduced(orderId, account, '31', '20.50');
    expect(settlementShapeProblem(once)).toBeNull();
    expect(await settlement.apply(once)).toBe(true);
    // 31 settled + 20.50 for the remainder: 48.50 of the 100 back to available cash.
    expect(await hold(orderId)).toEqual({ amount: '51.50000000', state: 'HELD', settled: '31.00000000' });
    expect(await balance(account)).toEqual({ cash: '969.00', held: '20.50', availableToTrade: '948.50' });
    const description = `Hold reduced for order ${orderId} (quantity now 6)`;
    expect(await releases(orderId)).toEqual([
      { description, book: 'CUSTOMER_HELD', amount: '-48.50000000' },
      { description, book: 'CUSTOMER_CASH', amount: '48.50000000' },
    ]);

    // The same event again, and another naming the same reduction: nothing moves.
    expect(await settlement.apply(once)).toBe(false);
    expect(await settlement.apply(reduced(orderId, account, '31', '20.50'))).toBe(false);
    // A reduction that would raise the hold changes nothing either.
    expect(await settlement.apply(reduced(orderId, account, '31', '60'))).toBe(false);
    expect(await hold(orderId)).toEqual({ amount: '51.50000000', state: 'HELD', settled: '31.00000000' });
    expect(await releases(orderId)).toHaveLength(2);
    expect(await balance(account)).toEqual({ cash: '969.00', held: '20.50', availableToTrade: '948.50' });

    // The order ends with nothing more filled: the rest of the smaller hold goes back, the hold is captured at what settled.
    await settlement.apply(closed(orderId, account, 'CANCELLED', '31'));
    expect(await hold(orderId)).toEqual({ amount: '51.50000000', state: 'CAPTURED', settled: '31.00000000' });
    expect(await balance(account)).toEqual({ cash: '969.00', held: '0.00', availableToTrade: '969.00' });
    expect(await h.ledgerInvariants()).toEqual({ unbalancedEntries: 0, total: '0.00000000', unbalancedAccounts: 0, driftedTotals: 0 });
  });

  it('changes nothing once the order has closed', async () => {
    const orderId = randomUUID();
    const account = await holding(orderId);
    await settlement.apply(closed(orderId, account, 'CANCELLED', '0'));
    expect(await hold(orderId)).toMatchObject({ amount: '100.00000000', state: 'RELEASED' });
    expect(await settlement.apply(reduced(orderId, account, '0', '10'))).toBe(false);
    expect(await hold(orderId)).toMatchObject({ amount: '100.00000000', state: 'RELEASED' });
    expect(await releases(orderId)).toHaveLength(2); // the close's release only
    expect(await balance(account)).toEqual({ cash: '1000.00', held: '0.00', availableToTrade: '1000.00' });
  });

  it('arriving before a fill it counts, keeps that fill held: the fill then settles out of the smaller hold', async () => {
    const orderId = randomUUID();
    const account = await holding(orderId);
    expect(await settlement.apply(reduced(orderId, account, '31', '20.50'))).toBe(true);
    expect(await hold(orderId)).toEqual({ amount: '51.50000000', state: 'HELD', settled: '0.00000000' });
    await settlement.apply(fill(orderId, account));
    expect(await hold(orderId)).toEqual({ amount: '51.50000000', state: 'HELD', settled: '31.00000000' });
    expect(await balance(account)).toEqual({ cash: '969.00', held: '20.50', availableToTrade: '948.50' });
    // Never below what has settled, whatever the event says.
    expect(await settlement.apply(reduced(orderId, account, '0', '10'))).toBe(true);
    expect(await hold(orderId)).toEqual({ amount: '31.00000000', state: 'HELD', settled: '31.00000000' });
    expect(await balance(account)).toEqual({ cash: '969.00', held: '0.00', availableToTrade: '969.00' });
    expect(await h.ledgerInvariants()).toEqual({ unbalancedEntries: 0, total: '0.00000000', unbalancedAccounts: 0, driftedTotals: 0 });
  });
});
