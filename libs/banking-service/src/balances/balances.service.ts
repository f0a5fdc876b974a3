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
  /** PENDING deposits: credited to cash only once they clear. */
  pendingIn: string;
  /** PENDING withdrawals: already held (in `held`), leave cash once paid out. */
  pendingOut: string;
}

interface Totals {
  cash: Decimal;
  held: Decimal;
  unsettled: Decimal;
  pendingIn: Decimal;
  pendingOut: Decimal;
}
const ZERO = new Decimal(0);

/** Balances follow from the account's customer-book postings: read from the running totals the database keeps of them (see ledger.ts). */
export class BalancesService {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Every currency the account has postings or pending funding in, ordered by currency. The ledger
   * totals and the PENDING funding transactions are read in one statement (one snapshot).
   */
  async forAccount(accountId: string, currency?: string): Promise<CashBalance[]> {
    const rows: Array<{ currency: string; cash: string; held: string; unsettled: string; pending_in: string; pending_out: string }> =
      await this.dataSource.query(
        `WITH books AS (
           SELECT currency,
                  coalesce(sum(amount) FILTER (WHERE book = 'CUSTOMER_CASH'), 0) AS cash,
                  coalesce(sum(amount) FILTER (WHERE book = 'CUSTOMER_HELD'), 0) AS held,
                  coalesce(sum(amount) FILTER (WHERE book = 'CUSTOMER_UNSETTLED'), 0) AS unsettled
             FROM book_balances
            WHERE account_id = $1 AND book IN ('CUSTOMER_CASH', 'CUSTOMER_HELD', 'CUSTOMER_UNSETTLED') AND ($2::text IS NULL OR currency = $2)
            GROUP BY currency),
         pending AS (
           SELECT currency,
                  coalesce(sum(amount) FILTER (WHERE type = 'DEPOSIT'), 0) AS pending_in,
                  coalesce(sum(amount) FILTER (WHERE type = 'WITHDRAWAL'), 0) AS pending_out
             FROM funding_transactions
            WHERE account_id = $1 AND state = 'PENDING' AND ($2::text IS NULL OR currency = $2)
            GROUP BY currency)
         SELECT currency,
                coalesce(b.cash, 0)::text AS cash, coalesce(b.held, 0)::text AS held, coalesce(b.unsettled, 0)::text AS unsettled,
                coalesce(p.pending_in, 0)::text AS pending_in, coalesce(p.pending_out, 0)::text AS pending_out
           FROM books b FULL JOIN pending p USING (currency)
          ORDER BY currency`,
        [accountId, currency ?? null],
      );
    return rows.map((r) =>
      toBalance(r.currency, {
        cash: new Decimal(r.cash),
        held: new Decimal(r.held),
        unsettled: new Decimal(r.unsettled),
        pendingIn: new Decimal(r.pending_in),
        pendingOut: new Decimal(r.pending_out),
      }),
    );
  }

  /** One currency; zeros when the account never used it. */
  async forCurrency(accountId: string, currency: string): Promise<CashBalance> {
    const [balance] = await this.forAccount(accountId, currency);
    return balance ?? toBalance(currency, { cash: ZERO, held: ZERO, unsettled: ZERO, pendingIn: ZERO, pendingOut: ZERO });
  }
}

function toBalance(currency: string, { cash, held, unsettled, pendingIn, pendingOut }: Totals): CashBalance {
  return {
    currency,
    cash: formatMoney(cash.plus(held).plus(unsettled), currency),
    settledCash: formatMoney(cash.plus(held), currency),
    unsettledCash: formatMoney(unsettled, currency),
    held: formatMoney(held, currency),
    availableToTrade: formatMoney(cash.plus(unsettled), currency),
    availableToWithdraw: formatMoney(Decimal.max(cash, 0), currency),
    pendingIn: formatMoney(pendingIn, currency),
    pendingOut: formatMoney(pendingOut, currency),
  };
}
