import { assertReachesAccount, reachesAccount, type Claims } from '@trading/auth';
import { queryPrepared, type DataSource, type NotifiedCache, type PreparedStatement } from '@trading/db';
import { errors, isUuid } from '@trading/errors';
import { ACCOUNT_COLUMNS, ACCOUNTS_OF_USER } from './account-rows';
import { parseSettingsChange } from './account-settings';
import type { Account } from './entities/account.entity';

/** The settings given ($3: whether the nickname is; $5 null: confirmations as they are) of one account of one owner. */
const UPDATE_SETTINGS: PreparedStatement = {
  name: 'account-settings-update',
  text: `UPDATE accounts
            SET nickname = CASE WHEN $3 THEN $4 ELSE nickname END,
                trade_confirmation_emails = coalesce($5, trade_confirmation_emails)
          WHERE id = $1 AND user_id = $2
      RETURNING ${ACCOUNT_COLUMNS}`,
};

/** An account's settings as the API shows them. */
interface AccountSettingsView {
  accountId: string;
  nickname: string | null;
  tradeConfirmationEmails: boolean;
}

/** Who asks: the user, and the accounts their token may reach. */
type Caller = Pick<Claims, 'sub' | 'accounts'>;

/** The channel the accounts table's trigger announces changes on (migration 1732230000031). */
export const ACCOUNTS_CHANGED_CHANNEL = 'accounts_changed';

export class AccountsService {
  constructor(
    private readonly dataSource: DataSource,
    /** A user's accounts by user id, current as of the last change announced. */
    private readonly cache: NotifiedCache<readonly Account[]>,
  ) {}

  /**
   * The caller's accounts, oldest first: the user's, less those their token was not given (a
   * token limited to chosen accounts lists those only). A copy: callers may not change the cache.
   */
  async listForCaller(caller: Caller): Promise<Account[]> {
    return (await this.accountsOf(caller.sub)).filter((a) => reachesAccount(caller, a.id));
  }

  /**
   * Null unless the account exists and belongs to the caller's user: nobody sees another user's
   * account. One of the user's own that the token was not given is FORBIDDEN naming accountId.
   */
  async findForCaller(id: string, caller: Caller): Promise<Account | null> {
    if (!isUuid(id)) return null;
    const account = (await this.accountsOf(caller.sub)).find((a) => a.id === id.toLowerCase()) ?? null;
    if (account) assertReachesAccount(caller, account.id);
    return account;
  }

  /**
   * Changes the settings of one of `userId`'s accounts; another user's account, or none, is
   * NOT_FOUND naming accountId, as unknown ones are. The owner is checked in the UPDATE itself.
   */
  async updateSettings(accountId: unknown, caller: Caller, input: unknown): Promise<AccountSettingsView> {
    if (typeof accountId !== 'string' || !isUuid(accountId)) throw errors.notFound('Account', 'accountId');
    assertReachesAccount(caller, accountId);
    const userId = caller.sub;
    const change = parseSettingsChange(input);
    const [row] = await queryPrepared<Account>(this.dataSource, UPDATE_SETTINGS, [
      accountId,
      userId,
      'nickname' in change,
      change.nickname ?? null,
      change.tradeConfirmationEmails ?? null,
    ]);
    if (!row) throw errors.notFound('Account', 'accountId');
    // Read your writes here at once; other instances hear of it from the table's trigger.
    this.cache.forget(userId);
    return { accountId: row.id, nickname: row.nickname, tradeConfirmationEmails: row.tradeConfirmationEmails };
  }

  private accountsOf(userId: string): Promise<readonly Account[]> {
    return this.cache.get(userId, async () =>
      Object.freeze((await queryPrepared<Account>(this.dataSource, ACCOUNTS_OF_USER, [userId])).map((a) => Object.freeze(a))),
    );
  }
}
