import Decimal from 'decimal.js';
import type { DataSource, EntityManager } from 'typeorm';
import { queryPrepared, type PreparedStatement } from '@trading/db';
import { AppError, parseUuid } from '@trading/errors';
import { bookTotals, cashLockName, lockAccountCurrency, postEntry } from '../ledger/ledger';
import { formatMoney, parseAmount, parseCurrency } from '@trading/money';

/** A hold's life: HELD, then RELEASED in full or CAPTURED (the rest released). */
export type HoldState = 'HELD' | 'RELEASED' | 'CAPTURED';

export interface HoldView {
  orderId: string;
  accountId: string;
  currency: string;
  amount: string;
  state: HoldState;
  capturedAmount: string | null;
  /** What went back to available cash: all of it on release, the rest on capture. */
  releasedAmount: string | null;
  createdAt: string;
  updatedAt: string;
}

/** Whose hold a call concerns: the order's user and account, as the OMS names them. */
export interface HoldOwner {
  userId: string;
  accountId: string;
}

interface HoldRow {
  order_id: string;
  account_id: string;
  user_id: string | null;
  currency: string;
  amount: string;
  state: HoldState;
  captured_amount: string | null;
  /** What the fills settled so far took of it. */
  settled_amount?: string;
  created_at: Date;
  updated_at: Date;
}

const ORDER_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function parseOrderId(value: unknown): string {
  if (typeof value !== 'string' || !ORDER_ID.test(value)) {
    throw new AppError('BAD_USER_INPUT', 'orderId must be 1 to 128 characters of A-Z a-z 0-9 . _ : -', { field: 'orderId' });
  }
  return value;
}

/** A hold row's columns, named: the hold statement is prepared once per connection, where a `*` would break once a migration adds one. */
export const HOLD_COLUMNS =
  'order_id, account_id, user_id, currency, amount, state, captured_amount, settled_amount, created_at, updated_at';

/**
 * A hold in one statement ($1 order, $2 account, $3 user, $4 currency, $5 amount, $6 the cash
 * lock's name, $7 the entry's description). The customer's books are read FOR UPDATE after the
 * account's cash lock: the lock is the one every booking on the account takes first, and a row
 * changed since the statement began is read as committed (READ COMMITTED re-reads a row it
 * locks), so the sum is the cash as it is once the lock is ours. Only then, and only if the cash
 * covers it, the hold's row (none if the order already has one: nothing is booked), its journal
 * entry and the two postings. The answer: what was available, and the new hold's row if any.
 */
const PLACE_HOLD_TEXT = `
  WITH locked AS (SELECT pg_advisory_xact_lock(hashtext($6))),
  books AS (
    SELECT b.book, b.amount FROM book_balances b, locked WHERE b.account_id = $2 AND b.currency = $4 FOR UPDATE OF b
  ),
  totals AS (
    SELECT coalesce(sum(amount) FILTER (WHERE book IN ('CUSTOMER_CASH', 'CUSTOMER_UNSETTLED')), 0) AS available FROM books
  ),
  hold AS (
    INSERT INTO holds (order_id, account_id, user_id, currency, amount, state)
    SELECT $1, $2, $3, $4, $5::numeric, 'HELD' FROM totals WHERE totals.available >= $5::numeric
    ON CONFLICT (order_id) DO NOTHING RETURNING ${HOLD_COLUMNS}
  ),
  entry AS (
    INSERT INTO journal_entries (kind, description, hold_order_id) SELECT 'HOLD', $7, order_id FROM hold RETURNING id
  ),
  posted AS (
    INSERT INTO postings (entry_id, account_id, book, currency, amount)
    SELECT entry.id, $2, leg.book, $4, leg.amount
      FROM entry, (VALUES ('CUSTOMER_CASH', -$5::numeric), ('CUSTOMER_HELD', $5::numeric)) AS leg (book, amount)
  )
  SELECT totals.available::text AS available, hold.* FROM totals LEFT JOIN hold ON true`;
/** Prepared: PostgreSQL parses and plans it once per connection, not once per order. */
// Stryker disable next-line StringLiteral: an unnamed statement runs the same text with the same result; the name only lets each connection keep the parsed plan
const PLACE_HOLD: PreparedStatement = { name: 'banking-place-hold', text: PLACE_HOLD_TEXT };

/**
 * Buying-power holds for the OMS, placed synchronously with each order, each idempotent by order id:
 *   place    CUSTOMER_CASH → CUSTOMER_HELD, only from available-to-trade cash (serialised per
 *            account and currency with withdrawals);
 *   release  CUSTOMER_HELD → CUSTOMER_CASH;
 *   capture  CUSTOMER_HELD → BANK_CLEARING for the captured amount (a TRADE cash movement),
 *            the rest back to CUSTOMER_CASH, in one entry.
 * Repeating a call with the same terms returns the hold as it is; other terms are refused.
 */
export class HoldsService {
  constructor(private readonly dataSource: DataSource) {}

  /** The caller has already checked that `userId` owns the account the body names. */
  async place(userId: string, body: Record<string, unknown>): Promise<{ hold: HoldView; created: boolean }> {
    const orderId = parseOrderId(body['orderId']);
    const accountId = parseUuid(body['accountId'], 'accountId');
    const currency = parseCurrency(body['currency']);
    const amount = parseAmount(body['amount'], currency);
    // One statement, its own transaction: the account's cash lock is held for as long as the
    // database takes to run it and commit, never across a round trip to this process (under load,
    // an account's next hold would otherwise wait on this process's event loop, not on the database).
    const [placed] = await queryPrepared<HoldRow & { available: string }>(this.dataSource, PLACE_HOLD, [
      orderId,
      accountId,
      userId,
      currency,
      amount,
      cashLockName(accountId, currency),
      `Hold for order ${orderId}`,
    ]);
    // Stryker disable next-line OptionalChaining: the hold statement always answers one row (its totals are one aggregate row), so `placed` is never undefined
    if (placed?.order_id) return { hold: toView(placed), created: true };
    const [existing]: HoldRow[] = await this.dataSource.query('SELECT * FROM holds WHERE order_id = $1', [orderId]);
    if (existing) {
      if (
        existing.user_id !== userId ||
        existing.account_id !== accountId ||
        existing.currency !== currency ||
        !new Decimal(existing.amount).eq(amount)
      )
        throw new AppError('UNPROCESSABLE', 'This orderId already has a hold with other terms', { field: 'orderId' });
      return { hold: toView(existing), created: false };
    }
    throw new AppError(
      'UNPROCESSABLE',
      // Stryker disable next-line OptionalChaining: the hold statement always answers one row (its totals are one aggregate row), so `placed` is never undefined
      `Insufficient funds: ${formatMoney(Decimal.max(placed?.available ?? 0, 0), currency)} ${currency} available to trade`,
      { field: 'amount' },
    );
  }

  /**
   * An order replaced by another, in one step: the old order's hold keeps `keep` (what its fills
   * cost, which it can no longer exceed: the OMS froze it), the rest goes back, and the
   * replacement's hold of `amount` is placed, from available cash plus what the old one gives
   * back. So a replace that lowers the hold always succeeds and one that raises it needs only the
   * difference. Idempotent by the replacement's order id; a refusal changes nothing.
   */
  async replace(orderIdInput: unknown, body: Record<string, unknown>, owner: HoldOwner): Promise<HoldView> {
    const orderId = parseOrderId(orderIdInput);
    const replacementId = parseOrderId(body['replacementOrderId']);
    if (replacementId === orderId) throw new AppError('BAD_USER_INPUT', 'replacementOrderId must differ', { field: 'replacementOrderId' });
    return this.dataSource.transaction(async (tx) => {
      const old = await this.find(tx, orderId, true, owner);
      const amount = parseAmount(body['amount'], old.currency);
      const keepInput = body['keep'];
      const keep =
        typeof keepInput === 'string' && /^0+(\.0+)?$/.test(keepInput)
          ? new Decimal(0)
          : new Decimal(parseAmount(keepInput, old.currency, 'keep'));
      const [row]: HoldRow[] = await tx.query(
        `INSERT INTO holds (order_id, account_id, user_id, currency, amount, state) VALUES ($1, $2, $3, $4, $5, 'HELD')
         ON CONFLICT (order_id) DO NOTHING RETURNING *`,
        [replacementId, old.account_id, owner.userId, old.currency, amount],
      );
      if (!row) {
        const [existing]: HoldRow[] = await tx.query('SELECT * FROM holds WHERE order_id = $1', [replacementId]);
        if (
          !existing ||
          existing.user_id !== owner.userId ||
          existing.account_id !== old.account_id ||
          !new Decimal(existing.amount).eq(amount)
        )
          throw new AppError('UNPROCESSABLE', 'This replacementOrderId already has a hold with other terms', {
            field: 'replacementOrderId',
          });
        return toView(existing); // done before
      }
      if (old.state !== 'HELD') throw new AppError('CONFLICT', `The hold was already ${old.state.toLowerCase()}`, { field: 'orderId' });
      const settled = new Decimal(old.settled_amount ?? 0);
      if (keep.gt(old.amount) || keep.lt(settled))
        throw new AppError('UNPROCESSABLE', `keep must lie between what settled and the held ${old.amount}`, { field: 'keep' });
      const freed = new Decimal(old.amount).minus(keep);
      await lockAccountCurrency(tx, old.account_id, old.currency);
      const { cash, unsettled } = await bookTotals(tx, old.account_id, old.currency);
      const available = cash.plus(unsettled).plus(freed);
      if (available.lt(amount)) {
        throw new AppError(
          'UNPROCESSABLE',
          `Insufficient funds: ${formatMoney(Decimal.max(available, 0), old.currency)} ${old.currency} available to trade, with what the replaced order gives back`,
          { field: 'amount' },
        );
      }
      if (freed.gt(0)) {
        await postEntry(tx, {
          kind: 'HOLD_RELEASE',
          description: `Hold reduced for order ${orderId}, replaced by ${replacementId}`,
          accountId: old.account_id,
          currency: old.currency,
          holdOrderId: orderId,
          legs: [
            { book: 'CUSTOMER_HELD', amount: freed.neg() },
            { book: 'CUSTOMER_CASH', amount: freed },
          ],
        });
      }
      if (keep.isZero()) await this.update(tx, orderId, 'RELEASED', null);
      else await tx.query('UPDATE holds SET amount = $2, updated_at = now() WHERE order_id = $1', [orderId, keep.toFixed()]);
      await postEntry(tx, {
        kind: 'HOLD',
        description: `Hold for order ${replacementId} (replaces ${orderId})`,
        accountId: old.account_id,
        currency: old.currency,
        holdOrderId: replacementId,
        legs: [
          { book: 'CUSTOMER_CASH', amount: new Decimal(amount).neg() },
          { book: 'CUSTOMER_HELD', amount },
        ],
      });
      return toView(row);
    });
  }

  async release(orderIdInput: unknown, owner: HoldOwner): Promise<HoldView> {
    const orderId = parseOrderId(orderIdInput);
    return this.dataSource.transaction(async (tx) => {
      const hold = await this.find(tx, orderId, true, owner);
      if (hold.state === 'RELEASED') return toView(hold);
      if (hold.state === 'CAPTURED') throw new AppError('CONFLICT', 'The hold was already captured', { field: 'orderId' });
      await postEntry(tx, {
        kind: 'HOLD_RELEASE',
        description: `Hold released for order ${orderId}`,
        accountId: hold.account_id,
        currency: hold.currency,
        holdOrderId: orderId,
        legs: [
          { book: 'CUSTOMER_HELD', amount: new Decimal(hold.amount).neg() },
          { book: 'CUSTOMER_CASH', amount: hold.amount },
        ],
      });
      return toView(await this.update(tx, orderId, 'RELEASED', null));
    });
  }

  async capture(orderIdInput: unknown, body: Record<string, unknown>, owner: HoldOwner): Promise<HoldView> {
    const orderId = parseOrderId(orderIdInput);
    const description = body['description'];
    if (description !== undefined && (typeof description !== 'string' || !/^[^\p{Cc}]{1,140}$/u.test(description))) {
      throw new AppError('BAD_USER_INPUT', 'description must be 1 to 140 characters without control characters', { field: 'description' });
    }
    return this.dataSource.transaction(async (tx) => {
      const hold = await this.find(tx, orderId, true, owner);
      const amount = parseAmount(body['amount'], hold.currency);
      if (hold.state === 'CAPTURED') {
        if (new Decimal(hold.captured_amount!).eq(amount)) return toView(hold);
        throw new AppError('CONFLICT', 'The hold was already captured for another amount', { field: 'amount' });
      }
      if (hold.state === 'RELEASED') throw new AppError('CONFLICT', 'The hold was already released', { field: 'orderId' });
      if (new Decimal(amount).gt(hold.amount)) {
        throw new AppError('UNPROCESSABLE', `amount exceeds the held ${formatMoney(hold.amount, hold.currency)} ${hold.currency}`, {
          field: 'amount',
        });
      }
      await postEntry(tx, {
        kind: 'TRADE',
        description: (description as string | undefined) ?? `Trade for order ${orderId}`,
        accountId: hold.account_id,
        currency: hold.currency,
        holdOrderId: orderId,
        legs: [
          { book: 'CUSTOMER_HELD', amount: new Decimal(hold.amount).neg() },
          { book: 'BANK_CLEARING', amount },
          { book: 'CUSTOMER_CASH', amount: new Decimal(hold.amount).minus(amount) },
        ],
      });
      return toView(await this.update(tx, orderId, 'CAPTURED', amount));
    });
  }

  async get(orderIdInput: unknown, owner: HoldOwner): Promise<HoldView> {
    return toView(await this.find(this.dataSource.manager, parseOrderId(orderIdInput), false, owner));
  }

  /** A hold of another user or account is answered as not found: an order id alone moves nothing. */
  private async find(tx: EntityManager, orderId: string, forUpdate: boolean, owner: HoldOwner): Promise<HoldRow> {
    const [hold]: HoldRow[] = await tx.query(`SELECT * FROM holds WHERE order_id = $1${forUpdate ? ' FOR UPDATE' : ''}`, [orderId]);
    if (!hold || hold.user_id !== owner.userId || hold.account_id !== owner.accountId)
      throw new AppError('NOT_FOUND', 'Hold not found', { field: 'orderId' });
    return hold;
  }

  private async update(tx: EntityManager, orderId: string, state: HoldState, capturedAmount: string | null): Promise<HoldRow> {
    const [rows] = await tx.query(`UPDATE holds SET state = $2, captured_amount = $3, updated_at = now() WHERE order_id = $1 RETURNING *`, [
      orderId,
      state,
      capturedAmount,
    ]);
    return rows[0];
  }
}

function toView(row: HoldRow): HoldView {
  const amount = new Decimal(row.amount);
  const released = row.state === 'RELEASED' ? amount : row.state === 'CAPTURED' ? amount.minus(row.captured_amount!) : null;
  return {
    orderId: row.order_id,
    accountId: row.account_id,
    currency: row.currency,
    amount: formatMoney(amount, row.currency),
    state: row.state,
    capturedAmount: row.captured_amount === null ? null : formatMoney(row.captured_amount, row.currency),
    releasedAmount: released === null ? null : formatMoney(released, row.currency),
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}
