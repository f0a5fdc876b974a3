import { randomInt } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { AppError, parseUuid } from '@trading/errors';
import { parseCurrency } from '@trading/money';
import { queryPrepared, type NotifiedCache } from '@trading/db';
import { ACCOUNT_BY_ID, ACCOUNT_COLUMNS, ACCOUNTS_OF_USER } from '../accounts/account-rows';
import type { Account, AccountStatus, AccountType } from '../accounts/entities/account.entity';

const TYPES: readonly AccountType[] = ['CASH', 'MARGIN'];
const STATUSES: readonly AccountStatus[] = ['ACTIVE', 'RESTRICTED', 'CLOSED'];

const bad = (field: string, message: string) => new AppError('BAD_USER_INPUT', `${field} ${message}`, { field });
const uuid = parseUuid;

/** An account as the back office shows it (with its owner). */
export const presentAccount = (a: Account) => ({
  accountId: a.id,
  userId: a.userId,
  number: a.number,
  type: a.type,
  status: a.status,
  baseCurrency: a.baseCurrency,
  createdAt: new Date(a.createdAt).toISOString(),
});

/**
 * The service team's side of accounts: opening one for a user, listing a user's, and closing
 * one in two steps around the other domains' checks (restrict it so nothing new starts, let
 * banking and the OMS say what remains, then close or restore).
 */
export class AccountsBackOffice {
  constructor(
    private readonly dataSource: DataSource,
    /** Every instance hears of a change from the table's trigger; this one drops its own at once (read your writes). */
    private readonly accountsOfUser: Pick<NotifiedCache<unknown>, 'forget'>,
  ) {}

  /** A new ACTIVE account; banking and the OMS learn of it on first use (they ask accounts). */
  async open(input: Record<string, unknown>): Promise<Account> {
    const userId = uuid(input['userId'], 'userId');
    const type = input['type'];
    if (typeof type !== 'string' || !TYPES.includes(type as AccountType)) throw bad('type', `must be one of ${TYPES.join(', ')}`);
    const baseCurrency = parseCurrency(input['currency'], 'currency');
    // Account numbers are 'TA' and eight random digits; a collision (1 in 10^8 per account) just draws again.
    for (let attempt = 0; ; attempt += 1) {
      const number = `TA${String(randomInt(0, 100_000_000)).padStart(8, '0')}`;
      const [row]: Account[] = await this.dataSource.query(
        `INSERT INTO accounts (user_id, number, type, status, base_currency) VALUES ($1, $2, $3, 'ACTIVE', $4)
         ON CONFLICT (number) DO NOTHING RETURNING ${ACCOUNT_COLUMNS}`,
        [userId, number, type, baseCurrency],
      );
      if (row) {
        this.accountsOfUser.forget(row.userId);
        return row;
      }
      if (attempt >= 5) throw new AppError('SERVICE_UNAVAILABLE', 'Could not draw a free account number; try again');
    }
  }

  list(userId: unknown): Promise<Account[]> {
    return queryPrepared<Account>(this.dataSource, ACCOUNTS_OF_USER, [uuid(userId, 'userId')]);
  }

  async get(id: unknown): Promise<Account> {
    const [account] = await queryPrepared<Account>(this.dataSource, ACCOUNT_BY_ID, [uuid(id, 'accountId')]);
    if (!account) throw new AppError('NOT_FOUND', 'Account not found', { field: 'accountId' });
    return account;
  }

  /** Step one of a close: RESTRICTED, so no order or transfer starts while the others are asked. */
  async beginClosing(id: unknown): Promise<{ account: Account; previousStatus: AccountStatus }> {
    const begun = await this.dataSource.transaction(async (tx) => {
      const account = await this.lock(tx, id);
      if (account.status === 'CLOSED')
        throw new AppError('CONFLICT', `Account ${account.number} is already closed`, { field: 'accountId' });
      await tx.query(`UPDATE accounts SET status = 'RESTRICTED' WHERE id = $1`, [account.id]);
      return { account: { ...account, status: 'RESTRICTED' as const }, previousStatus: account.status };
    });
    this.accountsOfUser.forget(begun.account.userId);
    return begun;
  }

  /**
   * Step two: CLOSED when nothing remains (the others' `blockers` plus any position here),
   * otherwise back to `restoreTo` and a 409 listing every reason.
   */
  async finishClosing(id: unknown, input: Record<string, unknown>): Promise<Account> {
    const blockers = Array.isArray(input['blockers']) ? input['blockers'].filter((b): b is string => typeof b === 'string') : [];
    const restoreTo = input['restoreTo'];
    if (typeof restoreTo !== 'string' || !STATUSES.includes(restoreTo as AccountStatus) || restoreTo === 'CLOSED')
      throw bad('restoreTo', 'must be ACTIVE or RESTRICTED');
    const outcome = await this.dataSource.transaction(async (tx) => {
      const account = await this.lock(tx, id);
      if (account.status === 'CLOSED')
        throw new AppError('CONFLICT', `Account ${account.number} is already closed`, { field: 'accountId' });
      const held: Array<{ symbol: string; quantity: string }> = await tx.query(
        `SELECT symbol, trim_scale(quantity)::text AS quantity FROM positions WHERE account_id = $1 AND quantity <> 0 ORDER BY symbol`,
        [account.id],
      );
      const reasons = [
        ...blockers,
        ...(held.length ? [`positions remain: ${held.map((p) => `${p.quantity} ${p.symbol}`).join(', ')}`] : []),
      ];
      const status = reasons.length ? (restoreTo as AccountStatus) : 'CLOSED';
      await tx.query('UPDATE accounts SET status = $2 WHERE id = $1', [account.id, status]);
      return { account: { ...account, status }, reasons };
    });
    // Committed either way (closed, or restored): this instance drops the owner's accounts at once.
    this.accountsOfUser.forget(outcome.account.userId);
    if (outcome.reasons.length) {
      throw new AppError('CONFLICT', `Account ${outcome.account.number} cannot be closed: ${outcome.reasons.join('; ')}`, {
        field: 'accountId',
        details: { reasons: outcome.reasons },
      });
    }
    return outcome.account;
  }

  private async lock(tx: EntityManager, id: unknown): Promise<Account> {
    const [account]: Account[] = await tx.query(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1 FOR UPDATE`, [
      uuid(id, 'accountId'),
    ]);
    if (!account) throw new AppError('NOT_FOUND', 'Account not found', { field: 'accountId' });
    return account;
  }
}
