import Decimal from 'decimal.js';
import type { DataSource, EntityManager } from 'typeorm';
import type { DeliveredEvent, OrderClosed, OrderReduced, TradeExecuted } from '@trading/events';
import { postEntry } from '../ledger/ledger';
import type { SaleSettlements } from './sale-settlement';

interface HoldRow {
  order_id: string;
  account_id: string;
  currency: string;
  amount: string;
  state: 'HELD' | 'RELEASED' | 'CAPTURED';
  settled_amount: string;
}

/**
 * Applies fills to the ledger exactly once per event id (a crash or a redelivery books nothing twice):
 *   buy fill    CUSTOMER_HELD → BANK_CLEARING (gross, a TRADE) and → FEES (commission, a FEE),
 *               out of the order's hold, which records what it has settled;
 *   sell fill   BANK_CLEARING → CUSTOMER_UNSETTLED (gross, TRADE), CUSTOMER_UNSETTLED → FEES
 *               (commission, FEE); the net moves to CUSTOMER_CASH on the settlement date (SaleSettlements);
 *   order close the hold's rest (hold − everything the order's fills settle) back to
 *               CUSTOMER_CASH; the hold ends CAPTURED (some filled) or RELEASED (none);
 *   order reduced (a working buy brought down to a smaller quantity) the hold comes down to what
 *               the order's fills settle plus what its remainder can still cost, the difference
 *               back to CUSTOMER_CASH; the hold stays HELD.
 * A close can arrive before some of its fills (redelivery order is not guaranteed): it
 * releases only what no fill will take, so the fills that follow still find their cash held.
 * A reduction names its target, not a change: applied again, late (after a smaller one) or after
 * the close it finds the hold at or below it and moves nothing, so it needs no record of its id.
 */
export class SettlementService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly sales: SaleSettlements,
  ) {}

  /** Applies one event in one transaction; false when it had been applied before. */
  async apply(event: DeliveredEvent): Promise<boolean> {
    if (event.type === 'order.reduced')
      return this.dataSource.transaction((tx) => this.reduce(tx, event.payload as unknown as OrderReduced));
    return this.dataSource.transaction(async (tx) => {
      const fresh = await tx.query(
        'INSERT INTO settlement_events (event_id, type) VALUES ($1, $2) ON CONFLICT (event_id) DO NOTHING RETURNING event_id',
        [event.eventId, event.type],
      );
      if (!fresh.length) return false;
      if (event.type === 'trade.executed') await this.trade(tx, event.payload as unknown as TradeExecuted);
      else if (event.type === 'order.closed') await this.close(tx, event.payload as unknown as OrderClosed);
      return true;
    });
  }

  private async trade(tx: EntityManager, { trade }: TradeExecuted): Promise<void> {
    const gross = new Decimal(trade.grossAmount);
    const commission = new Decimal(trade.commission);
    const what = `${trade.side === 'BUY' ? 'Bought' : 'Sold'} ${trade.quantity} ${trade.symbol} @ ${trade.price}`;
    const base = { accountId: trade.accountId, currency: trade.currency };
    const entries: string[] = [];
    if (trade.side === 'BUY') {
      const hold = await this.lockHold(tx, trade.orderId);
      // A buy fill without its hold would be a bug between the services: fail loudly, keep the event pending.
      if (!hold) throw new Error(`buy fill ${trade.id} has no hold for order ${trade.orderId}`);
      entries.push(
        await postEntry(tx, {
          ...base,
          kind: 'TRADE',
          description: what,
          holdOrderId: trade.orderId,
          legs: [
            { book: 'CUSTOMER_HELD', amount: gross.neg() },
            { book: 'BANK_CLEARING', amount: gross },
          ],
        }),
      );
      if (!commission.isZero()) {
        entries.push(
          await postEntry(tx, {
            ...base,
            kind: 'FEE',
            description: `Commission: ${what}`,
            holdOrderId: trade.orderId,
            legs: [
              { book: 'CUSTOMER_HELD', amount: commission.neg() },
              { book: 'FEES', amount: commission },
            ],
          }),
        );
      }
      await tx.query('UPDATE holds SET settled_amount = settled_amount + $2, updated_at = now() WHERE order_id = $1', [
        trade.orderId,
        gross.plus(commission).toFixed(),
      ]);
    } else {
      entries.push(
        await postEntry(tx, {
          ...base,
          kind: 'TRADE',
          description: what,
          legs: [
            { book: 'CUSTOMER_UNSETTLED', amount: gross },
            { book: 'BANK_CLEARING', amount: gross.neg() },
          ],
        }),
      );
      if (!commission.isZero()) {
        entries.push(
          await postEntry(tx, {
            ...base,
            kind: 'FEE',
            description: `Commission: ${what}`,
            legs: [
              { book: 'CUSTOMER_UNSETTLED', amount: commission.neg() },
              { book: 'FEES', amount: commission },
            ],
          }),
        );
      }
      await this.sales.schedule(tx, {
        tradeId: trade.id,
        accountId: trade.accountId,
        currency: trade.currency,
        net: gross.minus(commission),
        executedAt: new Date(trade.executedAt),
      });
    }
    await tx.query('UPDATE journal_entries SET trade_id = $2 WHERE id = ANY($1::uuid[])', [entries, trade.id]);
  }

  private async close(tx: EntityManager, { order }: OrderClosed): Promise<void> {
    const hold = await this.lockHold(tx, order.id);
    if (!hold || hold.state !== 'HELD') return; // never held (rejected) or already given back
    const settled = new Decimal(order.settledAmount);
    const rest = new Decimal(hold.amount).minus(settled);
    if (rest.gt(0)) await releaseHeld(tx, hold, order.id, rest, `Hold released for order ${order.id} (${order.status.toLowerCase()})`);
    await tx.query('UPDATE holds SET state = $2, captured_amount = $3, updated_at = now() WHERE order_id = $1', [
      order.id,
      settled.gt(0) ? 'CAPTURED' : 'RELEASED',
      settled.gt(0) ? settled.toFixed() : null,
    ]);
  }

  /**
   * A working buy's hold brought down to what its fills settle plus what its remainder can cost:
   * never below what has settled already, never up. False when nothing moved.
   */
  private async reduce(tx: EntityManager, { order }: OrderReduced): Promise<boolean> {
    const hold = await this.lockHold(tx, order.id);
    if (!hold || hold.state !== 'HELD') return false; // never held, or the order has closed
    const target = Decimal.max(new Decimal(order.settledAmount).plus(order.holdAmount), hold.settled_amount);
    const freed = new Decimal(hold.amount).minus(target);
    if (freed.lte(0)) return false; // at or below it already: applied before, or a smaller reduction came first
    await releaseHeld(tx, hold, order.id, freed, `Hold reduced for order ${order.id} (quantity now ${order.quantity})`);
    await tx.query('UPDATE holds SET amount = $2, updated_at = now() WHERE order_id = $1', [order.id, target.toFixed()]);
    return true;
  }

  private async lockHold(tx: EntityManager, orderId: string): Promise<HoldRow | undefined> {
    const [hold] = await tx.query(
      'SELECT order_id, account_id, currency, amount, state, settled_amount FROM holds WHERE order_id = $1 FOR UPDATE',
      [orderId],
    );
    return hold as HoldRow | undefined;
  }
}

/** Gives `amount` of an order's hold back to the account's free cash: one journal entry naming the order. */
function releaseHeld(
  tx: EntityManager,
  hold: { account_id: string; currency: string },
  orderId: string,
  amount: Decimal,
  description: string,
): Promise<string> {
  return postEntry(tx, {
    kind: 'HOLD_RELEASE',
    description,
    accountId: hold.account_id,
    currency: hold.currency,
    holdOrderId: orderId,
    legs: [
      { book: 'CUSTOMER_HELD', amount: amount.neg() },
      { book: 'CUSTOMER_CASH', amount },
    ],
  });
}
