import { queryPrepared, type DataSource, type NotifiedCache } from '@trading/db';
import { isUuid } from '@trading/errors';
import { ACCOUNTS_OF_USER } from './account-rows';
import type { Account } from './entities/account.entity';

/** The channel the accounts table's trigger announces changes on (migration 1732230000031). */
export const ACCOUNTS_CHANGED_CHANNEL = 'accounts_changed';

export class AccountsService {
  constructor(
    private readonly dataSource: DataSource,
    /** A user's accounts by user id, current as of the last change announced. */
    private readonly cache: NotifiedCache<readonly Account[]>,
  ) {}

  /** A user's accounts, oldest first (a copy: callers may not change what the cache holds). */
  async listForUser(userId: string): Promise<Account[]> {
    return [...(await this.accountsOf(userId))];
  }

  /** Null unless the account exists and belongs to `userId`: nobody sees another user's account. */
  async findOwned(id: string, userId: string): Promise<Account | null> {
    if (!isUuid(id)) return null;
    return (await this.accountsOf(userId)).find((a) => a.id === id) ?? null;
  }

  private accountsOf(userId: string): Promise<readonly Account[]> {
    return this.cache.get(userId, async () =>
      Object.freeze((await queryPrepared<Account>(this.dataSource, ACCOUNTS_OF_USER, [userId])).map((a) => Object.freeze(a))),
    );
  }
}
