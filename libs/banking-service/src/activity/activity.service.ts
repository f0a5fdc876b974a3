import type { DataSource } from 'typeorm';
import { parseDateRange, parseLimit, type CursorCodec, type Page } from '@trading/pagination';
import { formatMoney } from '@trading/money';

type CashActivityType = 'DEPOSIT' | 'WITHDRAWAL' | 'TRADE' | 'FEE';

export interface CashActivity {
  id: string;
  type: CashActivityType;
  currency: string;
  amount: string;
  balanceAfter: string;
  description: string;
  transactionId: string | null;
  occurredAt: string;
}

export interface CashActivityFilter {
  limit?: unknown;
  cursor?: unknown;
  from?: unknown;
  to?: unknown;
  type?: CashActivityType | null;
}

/**
 * The cash activity is read straight off the ledger: each journal entry's net effect on the
 * customer's books (cash + held + unsettled) per currency, where that is not zero. Holds and
 * their releases move money between the customer's own books, net to zero and do not show.
 * The running balance is a window sum over the entries in ledger order (seq).
 */
export class ActivityService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
  ) {}

  async list(accountId: string, filter: CashActivityFilter): Promise<Page<CashActivity>> {
    const limit = parseLimit(filter.limit);
    const range = parseDateRange(filter.from, filter.to);
    const scope = `activity:${accountId}`;
    const after = this.cursors.decode<{ s: string; c: string }>(filter.cursor, scope, ['s', 'c']);
    const rows: Array<{
      id: string;
      cursor_seq: string;
      kind: CashActivityType;
      description: string;
      funding_transaction_id: string | null;
      created_at: Date;
      currency: string;
      amount: string;
      balance_after: string;
    }> = await this.dataSource.query(
      `WITH moves AS (
           SELECT e.id, e.seq, e.kind, e.description, e.funding_transaction_id, e.created_at, p.currency, sum(p.amount) AS amount
             FROM postings p JOIN journal_entries e ON e.id = p.entry_id
            WHERE p.account_id = $1 AND p.book IN ('CUSTOMER_CASH', 'CUSTOMER_HELD', 'CUSTOMER_UNSETTLED')
            GROUP BY e.id, e.seq, p.currency
           HAVING sum(p.amount) <> 0
         ), running AS (
           SELECT *, sum(amount) OVER (PARTITION BY currency ORDER BY seq) AS balance_after FROM moves
         )
         -- The text copy of seq gets its own name: called seq, it would shadow the bigint in ORDER BY
         -- and sort as text ('9' > '100'), misordering the list and its cursor past 99 entries.
         SELECT id, seq::text AS cursor_seq, kind, description, funding_transaction_id, created_at, currency, amount::text, balance_after::text
           FROM running
          WHERE ($2::text IS NULL OR kind = $2)
            AND ($3::timestamptz IS NULL OR created_at >= $3)
            AND ($4::timestamptz IS NULL OR created_at < $4)
            AND ($5::bigint IS NULL OR (seq, currency) < ($5::bigint, $6::text))
          ORDER BY seq DESC, currency DESC
          LIMIT $7`,
      [accountId, filter.type ?? null, range.from, range.to, after?.s ?? null, after?.c ?? '', limit + 1],
    );
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      nodes: page.map((r) => ({
        id: r.id,
        type: r.kind,
        currency: r.currency,
        amount: formatMoney(r.amount, r.currency),
        balanceAfter: formatMoney(r.balance_after, r.currency),
        description: r.description,
        transactionId: r.funding_transaction_id,
        occurredAt: r.created_at.toISOString(),
      })),
      nextCursor: rows.length > limit && last ? this.cursors.encode(scope, { s: last.cursor_seq, c: last.currency }) : null,
    };
  }
}
