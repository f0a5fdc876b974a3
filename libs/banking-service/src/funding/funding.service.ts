import Decimal from 'decimal.js';
import type { DataSource, EntityManager } from 'typeorm';
import { assertReachesAccount, assertSandboxToken, idempotencyOwner, type Claims } from '@trading/auth';
import { AppError, parseUuid } from '@trading/errors';
import { parseDateRange, parseLimit, type CursorCodec, type Page } from '@trading/pagination';
import { parseIdempotencyKey } from '@trading/auth';
import { requestHash } from '@trading/db';
import { fundingIdempotency } from '../idempotency/idempotency';
import { bookTotals, lockAccountCurrency, postEntry } from '../ledger/ledger';
import { formatMoney, parseAmount, parseCurrency } from '@trading/money';
import { currentTraceparent } from '@trading/tracing';
import type { AccountsDirectory } from '@trading/accounts-directory';
import type { FundingState, FundingTransactionRow, FundingType, SandboxOutcome } from './funding-transaction';

/** A funding transaction as the API shows it. */
export interface FundingTransactionView {
  id: string;
  accountId: string;
  type: FundingType;
  state: FundingState;
  amount: string;
  currency: string;
  reference: string | null;
  rejectReason: string | null;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
  cancelledAt: string | null;
  rejectedAt: string | null;
}

export interface FundingInput {
  accountId: unknown;
  amount: unknown;
  currency: unknown;
  reference?: unknown;
  sandboxOutcome?: SandboxOutcome | null;
}

export interface FundingFilter {
  limit?: unknown;
  cursor?: unknown;
  from?: unknown;
  to?: unknown;
  type?: FundingType | null;
  state?: FundingState | null;
}

export interface FundingSettings {
  /** How long simulated clearing waits before settling a pending transaction. */
  clearingDelayMs: number;
  /** Whether requests may force the clearing outcome (`sandboxOutcome`). */
  sandbox: boolean;
  /** The most one deposit or withdrawal may move, in its currency's units. */
  maxTransactionAmount: string;
  /** Told once a transaction's end state has committed (its event is in the outbox: the relay may send it now). */
  onFinished?: () => void;
}

export interface Caller {
  claims: Claims;
  requestId?: string;
}

interface ParsedInput {
  accountId: string;
  amount: string;
  currency: string;
  reference: string | null;
  sandboxOutcome: SandboxOutcome | null;
}

export const SANDBOX_REJECT_REASON = 'Rejected by the sandbox (sandboxOutcome=REJECTED)';

/**
 * Deposits and withdrawals: PENDING → COMPLETED | CANCELLED | REJECTED.
 * A deposit moves no money until clearing completes it (BANK_CLEARING → CUSTOMER_CASH). A
 * withdrawal holds its amount at once (CUSTOMER_CASH → CUSTOMER_HELD, only from
 * available-to-withdraw cash, serialised per account and currency); completing it pays out
 * the held cash (CUSTOMER_HELD → BANK_CLEARING), cancelling or rejecting releases it.
 */
export class FundingService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly ownership: AccountsDirectory,
    private readonly cursors: CursorCodec,
    private readonly settings: FundingSettings,
  ) {}

  deposit(caller: Caller, input: FundingInput, idempotencyKey: unknown): Promise<FundingTransactionView> {
    return this.create('DEPOSIT', caller, input, idempotencyKey);
  }

  withdraw(caller: Caller, input: FundingInput, idempotencyKey: unknown): Promise<FundingTransactionView> {
    return this.create('WITHDRAWAL', caller, input, idempotencyKey);
  }

  async cancel(caller: Caller, transactionIdInput: unknown, idempotencyKey: unknown): Promise<FundingTransactionView> {
    const transactionId = parseUuid(transactionIdInput, 'transactionId');
    const key = parseIdempotencyKey(idempotencyKey);
    const userId = caller.claims.sub;
    const keyOwner = idempotencyOwner(caller.claims);
    const view = await this.dataSource.transaction(async (tx) => {
      if (key) {
        const claimed = await fundingIdempotency.claim(tx, keyOwner, key, requestHash('cancelFundingTransaction', { transactionId }));
        if (!claimed.first) return claimed.result;
      }
      const [row]: FundingTransactionRow[] = await tx.query('SELECT * FROM funding_transactions WHERE id = $1 FOR UPDATE', [transactionId]);
      if (!row || row.user_id !== userId) throw new AppError('NOT_FOUND', 'Funding transaction not found', { field: 'transactionId' });
      // The user's own, in an account their token was not given: refused as that account's other calls are.
      assertReachesAccount(caller.claims, row.account_id);
      let result: FundingTransactionView;
      if (row.state === 'CANCELLED') {
        result = toView(row); // cancelling twice is harmless
      } else if (row.state !== 'PENDING') {
        throw new AppError('CONFLICT', `Only a PENDING transaction can be cancelled; this one is ${row.state}`, { field: 'transactionId' });
      } else {
        if (row.type === 'WITHDRAWAL') await this.releaseWithdrawal(tx, row, 'Withdrawal cancelled');
        result = toView(await finish(tx, row.id, 'CANCELLED'));
      }
      if (key) await fundingIdempotency.remember(tx, keyOwner, key, result);
      return result;
    });
    this.settings.onFinished?.();
    return view;
  }

  /**
   * The DEV sandbox's failed transfer: the caller's PENDING deposit or withdrawal is rejected now,
   * as clearing rejects one (a withdrawal's held cash goes back to the cash book). DEV tokens only;
   * another user's transaction is a 404; one no longer PENDING a 409.
   */
  async failPending(caller: Caller, transactionIdInput: unknown, reasonInput: unknown): Promise<FundingTransactionView> {
    assertSandboxToken(caller.claims);
    const transactionId = parseUuid(transactionIdInput, 'transactionId');
    const reason = parseFailReason(reasonInput);
    return this.dataSource.transaction(async (tx) => {
      const [row]: FundingTransactionRow[] = await tx.query('SELECT * FROM funding_transactions WHERE id = $1 FOR UPDATE', [transactionId]);
      if (!row || row.user_id !== caller.claims.sub)
        throw new AppError('NOT_FOUND', 'Funding transaction not found', { field: 'transactionId' });
      assertReachesAccount(caller.claims, row.account_id, 'transactionId');
      if (row.state !== 'PENDING')
        throw new AppError('CONFLICT', `Only a PENDING transaction can fail; this one is ${row.state}`, { field: 'transactionId' });
      if (row.type === 'WITHDRAWAL') await this.releaseWithdrawal(tx, row, 'Withdrawal rejected');
      return toView(await finish(tx, row.id, 'REJECTED', reason));
    });
  }

  async list(accountId: string, filter: FundingFilter): Promise<Page<FundingTransactionView>> {
    const limit = parseLimit(filter.limit);
    const range = parseDateRange(filter.from, filter.to);
    const scope = `funding:${accountId}`;
    const after = this.cursors.decode<{ s: string }>(filter.cursor, scope, ['s']);
    const rows: FundingTransactionRow[] = await this.dataSource.query(
      `SELECT *, seq::text FROM funding_transactions
        WHERE account_id = $1
          AND ($2::text IS NULL OR type = $2) AND ($3::text IS NULL OR state = $3)
          AND ($4::timestamptz IS NULL OR created_at >= $4) AND ($5::timestamptz IS NULL OR created_at < $5)
          AND ($6::bigint IS NULL OR seq < $6)
        ORDER BY funding_transactions.seq DESC LIMIT $7`,
      [accountId, filter.type ?? null, filter.state ?? null, range.from, range.to, after?.s ?? null, limit + 1],
    );
    return this.cursors.page(rows, limit, scope, (last) => ({ s: last.seq }), toView);
  }

  /**
   * Simulated clearing: settles up to `max` pending transactions whose delay has passed, each
   * in its own transaction. SKIP LOCKED lets several instances (and a concurrent cancel) share
   * the work without settling anything twice. Returns how many it settled.
   */
  async clearDue(max = 50): Promise<number> {
    let settled = 0;
    while (settled < max) {
      const done = await this.dataSource.transaction(async (tx) => {
        const [row]: FundingTransactionRow[] = await tx.query(
          `SELECT * FROM funding_transactions WHERE state = 'PENDING' AND clear_after <= now()
            ORDER BY clear_after LIMIT 1 FOR UPDATE SKIP LOCKED`,
        );
        if (!row) return false;
        if (row.sandbox_outcome === 'REJECTED') {
          if (row.type === 'WITHDRAWAL') await this.releaseWithdrawal(tx, row, 'Withdrawal rejected');
          await finish(tx, row.id, 'REJECTED', SANDBOX_REJECT_REASON);
        } else {
          const withdrawal = row.type === 'WITHDRAWAL';
          await postEntry(tx, {
            kind: row.type,
            description: describeEntry(withdrawal ? 'Withdrawal' : 'Deposit', row.reference),
            accountId: row.account_id,
            currency: row.currency,
            fundingTransactionId: row.id,
            legs: withdrawal
              ? [
                  { book: 'CUSTOMER_HELD', amount: new Decimal(row.amount).neg() },
                  { book: 'BANK_CLEARING', amount: row.amount },
                ]
              : [
                  { book: 'CUSTOMER_CASH', amount: row.amount },
                  { book: 'BANK_CLEARING', amount: new Decimal(row.amount).neg() },
                ],
          });
          await finish(tx, row.id, 'COMPLETED');
        }
        return true;
      });
      if (!done) break;
      settled++;
    }
    if (settled) this.settings.onFinished?.();
    return settled;
  }

  private async create(type: FundingType, caller: Caller, input: FundingInput, idempotencyKey: unknown): Promise<FundingTransactionView> {
    const parsed = this.parseInput(input);
    const key = parseIdempotencyKey(idempotencyKey);
    const account = await this.ownership.find(parsed.accountId, caller.claims, { requestId: caller.requestId });
    if (!account) throw new AppError('NOT_FOUND', 'Account not found', { field: 'accountId' });
    if (account.status !== 'ACTIVE')
      throw new AppError('UNPROCESSABLE', `The account is ${account.status}; only an ACTIVE account can move money`, {
        field: 'accountId',
      });
    const userId = caller.claims.sub;
    const keyOwner = idempotencyOwner(caller.claims);
    return this.dataSource.transaction(async (tx) => {
      if (key) {
        const claimed = await fundingIdempotency.claim(
          tx,
          keyOwner,
          key,
          requestHash(type === 'DEPOSIT' ? 'deposit' : 'withdraw', { ...parsed }),
        );
        if (!claimed.first) return claimed.result;
      }
      if (type === 'WITHDRAWAL') {
        await lockAccountCurrency(tx, parsed.accountId, parsed.currency);
        const { cash } = await bookTotals(tx, parsed.accountId, parsed.currency);
        if (cash.lt(parsed.amount)) {
          throw new AppError(
            'UNPROCESSABLE',
            `Insufficient funds: ${formatMoney(Decimal.max(cash, 0), parsed.currency)} ${parsed.currency} available to withdraw`,
            { field: 'amount' },
          );
        }
      }
      const [row]: FundingTransactionRow[] = await tx.query(
        `INSERT INTO funding_transactions (account_id, user_id, type, state, amount, currency, reference, sandbox_outcome, clear_after)
         VALUES ($1, $2, $3, 'PENDING', $4, $5, $6, $7, now() + make_interval(secs => $8::double precision / 1000)) RETURNING *, seq::text`,
        [
          parsed.accountId,
          userId,
          type,
          parsed.amount,
          parsed.currency,
          parsed.reference,
          parsed.sandboxOutcome,
          this.settings.clearingDelayMs,
        ],
      );
      if (type === 'WITHDRAWAL') {
        await postEntry(tx, {
          kind: 'WITHDRAWAL_HOLD',
          description: describeEntry('Withdrawal pending', parsed.reference),
          accountId: parsed.accountId,
          currency: parsed.currency,
          fundingTransactionId: row!.id,
          legs: [
            { book: 'CUSTOMER_CASH', amount: new Decimal(parsed.amount).neg() },
            { book: 'CUSTOMER_HELD', amount: parsed.amount },
          ],
        });
      }
      const result = toView(row!);
      if (key) await fundingIdempotency.remember(tx, keyOwner, key, result);
      return result;
    });
  }

  private parseInput(input: FundingInput): ParsedInput {
    const accountId = parseUuid(input.accountId, 'accountId');
    const currency = parseCurrency(input.currency);
    const amount = parseAmount(input.amount, currency);
    if (new Decimal(amount).gt(this.settings.maxTransactionAmount)) {
      throw new AppError('UNPROCESSABLE', `amount may be at most ${this.settings.maxTransactionAmount} ${currency} per transaction`, {
        field: 'amount',
      });
    }
    let reference: string | null = null;
    if (input.reference !== undefined && input.reference !== null) {
      if (typeof input.reference !== 'string' || !/^[^\p{Cc}]{1,140}$/u.test(input.reference)) {
        throw new AppError('BAD_USER_INPUT', 'reference must be 1 to 140 characters without control characters', { field: 'reference' });
      }
      reference = input.reference;
    }
    const sandboxOutcome = input.sandboxOutcome ?? null;
    if (sandboxOutcome && !this.settings.sandbox) {
      throw new AppError('BAD_USER_INPUT', 'sandboxOutcome is only accepted in the sandbox', { field: 'sandboxOutcome' });
    }
    return { accountId, amount, currency, reference, sandboxOutcome };
  }

  private async releaseWithdrawal(tx: EntityManager, row: FundingTransactionRow, description: string): Promise<void> {
    await postEntry(tx, {
      kind: 'WITHDRAWAL_RELEASE',
      description: describeEntry(description, row.reference),
      accountId: row.account_id,
      currency: row.currency,
      fundingTransactionId: row.id,
      legs: [
        { book: 'CUSTOMER_HELD', amount: new Decimal(row.amount).neg() },
        { book: 'CUSTOMER_CASH', amount: row.amount },
      ],
    });
  }
}

/** A deposit that arrives already cleared (the demo seed's opening cash). */
export async function bookCompletedDeposit(
  dataSource: DataSource,
  accountId: string,
  currency: string,
  amount: string,
  description: string,
): Promise<string> {
  return dataSource.transaction(async (tx) => {
    const [row]: FundingTransactionRow[] = await tx.query(
      `INSERT INTO funding_transactions (account_id, type, state, amount, currency, reference, clear_after, completed_at)
       VALUES ($1, 'DEPOSIT', 'COMPLETED', $2, $3, $4, now(), now()) RETURNING *`,
      [accountId, amount, currency, description],
    );
    await postEntry(tx, {
      kind: 'DEPOSIT',
      description,
      accountId,
      currency,
      fundingTransactionId: row!.id,
      legs: [
        { book: 'CUSTOMER_CASH', amount },
        { book: 'BANK_CLEARING', amount: new Decimal(amount).neg() },
      ],
    });
    return row!.id;
  });
}

async function finish(
  tx: EntityManager,
  id: string,
  state: Exclude<FundingState, 'PENDING'>,
  rejectReason?: string,
): Promise<FundingTransactionRow> {
  const stamp = { COMPLETED: 'completed_at', CANCELLED: 'cancelled_at', REJECTED: 'rejected_at' }[state];
  const [rows] = await tx.query(
    `UPDATE funding_transactions SET state = $2, ${stamp} = now(), updated_at = now(), reject_reason = $3 WHERE id = $1 AND state = 'PENDING' RETURNING *, seq::text`,
    [id, state, rejectReason ?? null],
  );
  if (!rows?.[0]) throw new Error(`funding transaction ${id} was not PENDING`);
  const row: FundingTransactionRow = rows[0];
  await announceFunding(tx, row);
  return row;
}

/** A transaction's end state on the event stream: written with the change, so both commit or neither. */
const FUNDING_UPDATED = 'funding.updated';

/** The transaction as its owner sees it in the API, and whose it is (null for seeded deposits), into banking's outbox. */
async function announceFunding(tx: EntityManager, row: FundingTransactionRow): Promise<void> {
  await tx.query('INSERT INTO outbox (type, payload, trace_context) VALUES ($1, $2, $3)', [
    FUNDING_UPDATED,
    JSON.stringify({ transaction: toView(row), userId: row.user_id ?? null }),
    currentTraceparent() ?? null,
  ]);
}

/** A sandbox failure's reason: 1 to 200 characters without control characters; absent, the sandbox's own. */
function parseFailReason(value: unknown): string {
  if (value === undefined || value === null) return 'Rejected by the sandbox';
  if (typeof value !== 'string' || !/^[^\p{Cc}]{1,200}$/u.test(value))
    throw new AppError('BAD_USER_INPUT', 'reason must be 1 to 200 characters without control characters', { field: 'reason' });
  return value;
}

const describeEntry = (what: string, reference: string | null) => (reference ? `${what}: ${reference}` : what);

function toView(row: FundingTransactionRow): FundingTransactionView {
  const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);
  return {
    id: row.id,
    accountId: row.account_id,
    type: row.type,
    state: row.state,
    amount: formatMoney(row.amount, row.currency),
    currency: row.currency,
    reference: row.reference,
    rejectReason: row.reject_reason,
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
    completedAt: iso(row.completed_at),
    cancelledAt: iso(row.cancelled_at),
    rejectedAt: iso(row.rejected_at),
  };
}
