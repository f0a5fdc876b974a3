import Decimal from 'decimal.js';
import type { DataSource } from 'typeorm';

export interface CashBalance {
  currency: string;
  cash: string;
}

/** Balances are never stored: they are the sum of the account's customer-cash postings. */
export class BalancesService {
  constructor(private readonly dataSource: DataSource) {}

  async forAccount(accountId: string): Promise<CashBalance[]> {
    const rows: Array<{ currency: string; cash: string }> = await this.dataSource.query(
      `SELECT currency, sum(amount)::text AS cash FROM postings
        WHERE account_id = $1 AND book = 'CUSTOMER_CASH' GROUP BY currency ORDER BY currency`,
      [accountId],
    );
    return rows.map((r) => ({ currency: r.currency, cash: new Decimal(r.cash).toFixed(2) }));
  }

  /** Books one balanced entry: customer cash up by `amount`, the bank's clearing account down. */
  async deposit(accountId: string, currency: string, amount: string, description: string): Promise<string> {
    return this.dataSource.transaction(async (tx) => {
      const [entry] = await tx.query(`INSERT INTO journal_entries (kind, description) VALUES ('DEPOSIT', $1) RETURNING id`, [description]);
      await tx.query(
        `INSERT INTO postings (entry_id, account_id, book, currency, amount)
         VALUES ($1, $2, 'CUSTOMER_CASH', $3, $4), ($1, $2, 'BANK_CLEARING', $3, -$4::numeric)`,
        [entry.id, accountId, currency, new Decimal(amount).toFixed()],
      );
      return entry.id as string;
    });
  }
}
