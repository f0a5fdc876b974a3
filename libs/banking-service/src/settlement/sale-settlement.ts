import Decimal from 'decimal.js';
import type { DataSource, EntityManager } from 'typeorm';
import { postEntry } from '../ledger/ledger';

/** The settlement date of a trade: `days` business days (Monday to Friday, UTC) after it. No holiday calendar. */
export function settlementDate(executedAt: Date, days: number): string {
  const date = new Date(Date.UTC(executedAt.getUTCFullYear(), executedAt.getUTCMonth(), executedAt.getUTCDate()));
  for (let left = days; left > 0; ) {
    date.setUTCDate(date.getUTCDate() + 1);
    if (date.getUTCDay() !== 0 && date.getUTCDay() !== 6) left--;
  }
  return date.toISOString().slice(0, 10);
}

/**
 * Sale proceeds settle T+n (BANKING_SETTLEMENT_DAYS): booked to CUSTOMER_UNSETTLED when the
 * fill arrives — usable for buying at once, as brokers allow in cash accounts, but not
 * withdrawable — and moved to CUSTOMER_CASH on the settlement date by `settleDue`.
 */
export class SaleSettlements {
  constructor(
    private readonly dataSource: DataSource,
    private readonly days: number,
  ) {}

  /** Inside the fill's transaction: what will move, and when. */
  async schedule(
    tx: EntityManager,
    sale: { tradeId: string; accountId: string; currency: string; net: Decimal; executedAt: Date },
  ): Promise<void> {
    await tx.query(
      'INSERT INTO sale_settlements (trade_id, account_id, currency, amount, settle_on) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (trade_id) DO NOTHING',
      [sale.tradeId, sale.accountId, sale.currency, sale.net.toFixed(), settlementDate(sale.executedAt, this.days)],
    );
  }

  /** Settles every sale due today or earlier, each in its own transaction; safe with several instances (SKIP LOCKED). */
  async settleDue(): Promise<number> {
    let settled = 0;
    for (;;) {
      const done = await this.dataSource.transaction(async (tx) => {
        const [due]: Array<{ trade_id: string; account_id: string; currency: string; amount: string }> = await tx.query(
          "SELECT trade_id, account_id, currency, amount FROM sale_settlements WHERE settled_at IS NULL AND settle_on <= (now() AT TIME ZONE 'UTC')::date ORDER BY settle_on LIMIT 1 FOR UPDATE SKIP LOCKED",
        );
        if (!due) return false;
        await postEntry(tx, {
          kind: 'SETTLEMENT',
          description: `Sale proceeds settled (trade ${due.trade_id})`,
          accountId: due.account_id,
          // Stryker disable next-line MethodExpression: the column is char(3) and every currency the ledger takes is three letters, so there is never padding to trim
          currency: due.currency.trim(),
          legs: [
            { book: 'CUSTOMER_UNSETTLED', amount: new Decimal(due.amount).neg() },
            { book: 'CUSTOMER_CASH', amount: due.amount },
          ],
        });
        await tx.query('UPDATE sale_settlements SET settled_at = now() WHERE trade_id = $1', [due.trade_id]);
        return true;
      });
      if (!done) return settled;
      settled++;
    }
  }
}
