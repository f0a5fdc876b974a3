import Decimal from 'decimal.js';
import type { EntityManager } from 'typeorm';

/**
 * The books of the double-entry ledger. Every posting names the customer account it belongs
 * to (the bank-side legs too, so each account's sub-ledger sums to zero on its own).
 *
 * Sign convention: amounts are seen from the customer's side. A positive amount in a
 * CUSTOMER_* book is money the broker owes the customer in that state; the bank-side books
 * carry the matching negative (BANK_CLEARING: money that came in from / went out to the
 * outside world; FEES: what the broker earned). Every journal entry sums to zero per currency
 * (a deferred constraint trigger refuses to commit one that does not).
 *
 *   CUSTOMER_CASH        settled and free: withdrawable
 *   CUSTOMER_HELD        settled but reserved for open orders and pending withdrawals
 *   CUSTOMER_UNSETTLED   trade proceeds not yet settled: tradable, not withdrawable
 *
 * Balances are derived, never stored:
 *   cash = CASH + HELD + UNSETTLED, settledCash = CASH + HELD, unsettledCash = UNSETTLED,
 *   held = HELD, availableToTrade = CASH + UNSETTLED, availableToWithdraw = max(0, CASH).
 */
type LedgerBook = 'CUSTOMER_CASH' | 'CUSTOMER_HELD' | 'CUSTOMER_UNSETTLED' | 'BANK_CLEARING' | 'FEES';

/**
 * What caused an entry. DEPOSIT, WITHDRAWAL, TRADE and FEE move the customer's cash and show
 * in the cash activity; the others only move money between the customer's own books.
 */
type EntryKind =
  | 'DEPOSIT'
  | 'WITHDRAWAL'
  | 'TRADE'
  | 'FEE'
  | 'WITHDRAWAL_HOLD'
  | 'WITHDRAWAL_RELEASE'
  | 'HOLD'
  | 'HOLD_RELEASE'
  | 'SETTLEMENT';

interface Leg {
  book: LedgerBook;
  amount: Decimal.Value;
}

export interface EntrySpec {
  kind: EntryKind;
  description: string;
  accountId: string;
  currency: string;
  fundingTransactionId?: string;
  holdOrderId?: string;
  legs: Leg[];
}

/** Books one journal entry inside the caller's transaction. Zero legs are dropped. */
export async function postEntry(tx: EntityManager, spec: EntrySpec): Promise<string> {
  const legs = spec.legs.filter((l) => !new Decimal(l.amount).isZero());
  const total = legs.reduce((sum, l) => sum.plus(l.amount), new Decimal(0));
  if (!total.isZero()) throw new Error(`journal entry ${spec.kind} does not balance (${total.toFixed()})`);
  // Every posting updates its account's running totals (a row lock per book until commit): taking the
  // account's lock first orders every transaction that books on it, so two can never wait on each other.
  // One statement (one round trip): the lock, then the entry (it reads the lock's row), then its postings.
  const values = legs.map((_, i) => `($${i * 2 + 8}::text, $${i * 2 + 9}::numeric)`).join(', ');
  const [entry]: Array<{ id: string }> = await tx.query(
    `WITH locked AS (SELECT pg_advisory_xact_lock(hashtext($1))),
          entry AS (
            INSERT INTO journal_entries (kind, description, funding_transaction_id, hold_order_id)
            SELECT $2, $3, $4, $5 FROM locked RETURNING id
          )${
            legs.length
              ? `, posted AS (
            INSERT INTO postings (entry_id, account_id, book, currency, amount)
            SELECT entry.id, $6, leg.book, $7, leg.amount FROM entry, (VALUES ${values}) AS leg (book, amount)
          )`
              : ''
          }
     SELECT id FROM entry`,
    [
      cashLockName(spec.accountId, spec.currency),
      spec.kind,
      spec.description,
      spec.fundingTransactionId ?? null,
      spec.holdOrderId ?? null,
      // An entry that moves nothing (a sale whose commission took all its proceeds) has no postings,
      // and PostgreSQL refuses parameters a statement does not use.
      ...(legs.length ? [spec.accountId, spec.currency, ...legs.flatMap((l) => [l.book, new Decimal(l.amount).toFixed()])] : []),
    ],
  );
  return entry!.id;
}

/**
 * Serialises everything that books on an account in one currency until the transaction ends:
 * two spends can never both see the same free cash, and the running totals' row locks are always
 * taken under it. Re-entrant: a spend takes it before reading the totals, postEntry again.
 */
export async function lockAccountCurrency(tx: EntityManager, accountId: string, currency: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [cashLockName(accountId, currency)]);
}

/** The advisory lock's name (hashed) for an account's cash in one currency; for statements that take it themselves. */
export const cashLockName = (accountId: string, currency: string): string => `cash:${accountId}:${currency}`;

export interface BookTotals {
  cash: Decimal;
  held: Decimal;
  unsettled: Decimal;
}

/** The customer's books in one currency: the running totals the database keeps from the postings (see the book-balances migration). */
export async function bookTotals(tx: EntityManager, accountId: string, currency: string): Promise<BookTotals> {
  const [row] = await tx.query(
    `SELECT coalesce(sum(amount) FILTER (WHERE book = 'CUSTOMER_CASH'), 0)::text AS cash,
            coalesce(sum(amount) FILTER (WHERE book = 'CUSTOMER_HELD'), 0)::text AS held,
            coalesce(sum(amount) FILTER (WHERE book = 'CUSTOMER_UNSETTLED'), 0)::text AS unsettled
       FROM book_balances WHERE account_id = $1 AND currency = $2`,
    [accountId, currency],
  );
  return { cash: new Decimal(row.cash), held: new Decimal(row.held), unsettled: new Decimal(row.unsettled) };
}

/**
 * Rows where a running total differs from the sum of its postings (there must be none): for the
 * invariant checks of tests and the scale-out run.
 */
export const BOOK_BALANCE_DRIFT_SQL = `
  SELECT coalesce(b.account_id, p.account_id) AS account_id, coalesce(b.book, p.book) AS book,
         coalesce(b.currency, p.currency) AS currency, b.amount::text AS total, p.amount::text AS postings
    FROM book_balances b
    FULL JOIN (SELECT account_id, book, currency, sum(amount) AS amount FROM postings GROUP BY 1, 2, 3) p
      ON (p.account_id, p.book, p.currency) = (b.account_id, b.book, b.currency)
   WHERE b.amount IS DISTINCT FROM p.amount`;
