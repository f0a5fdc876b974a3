import Decimal from 'decimal.js';
import type { DataSource } from 'typeorm';
import { formatMoney } from '@trading/money';

export interface CashBalance {
  currency: string;
  cash: string;
  settledCash: string;
  unsettledCash: string;
  held: string;
  availableToTrade: string;
  availableToWithdraw: string;
}

/** Balances follow from the account's customer-book postings: read from the running totals the database keeps of them (see ledger.ts). */
export class BalancesService {
  constructor(private readonly dataSource: DataSource) {}

  /** Every currency the account has postings in, ordered by currency. */
  async forAccount(accountId: string, currency?: string): Promise<CashBalance[]> {
    const rows: Array<{ currency: string; cash: string; held: string; unsettled: string }> = await this.dataSource.query(
      `SELECT currency,
              coalesce(sum(amount) FILTER (WHERE book = 'CUSTOMER_CASH'), 0)::text AS cash,
              coalesce(sum(amount) FILTER (WHERE book = 'CUSTOMER_HELD'), 0)::text AS held,
              coalesce(sum(amount) FILTER (WHERE book = 'CUSTOMER_UNSETTLED'), 0)::text AS unsettled
         FROM book_balances
        WHERE account_id = $1 AND book IN ('CUSTOMER_CASH', 'CUSTOMER_HELD', 'CUSTOMER_UNSETTLED') AND ($2::text IS NULL OR currency = $2)
        GROUP BY currency ORDER BY currency`,
      [accountId, currency ?? null],
    );
    return rows.map((r) => toBalance(r.currency, new Decimal(r.cash), new Decimal(r.held), new Decimal(r.unsettled)));
  }

  /** One currency; zeros when the account never used it. */
  async forCurrency(accountId: string, currency: string): Promise<CashBalance> {
    const [balance] = await this.forAccount(accountId, currency);
    return balance ?? toBalance(currency, new Decimal(0), new Decimal(0), new Decimal(0));
  }
}

function toBalance(currency: string, cash: Decimal, held: Decimal, unsettled: Decimal): CashBalance {
  return {
    currency,
    cash: formatMoney(cash.plus(held).plus(unsettled), currency),
    settledCash: formatMoney(cash.plus(held), currency),
    unsettledCash: formatMoney(unsettled, currency),
    held: formatMoney(held, currency),
    availableToTrade: formatMoney(cash.plus(unsettled), currency),
    availableToWithdraw: formatMoney(Decimal.max(cash, 0), currency),
  };
}
