import { queryPrepared, type DataSource } from '@trading/db';
import { isUuid } from '@trading/errors';
import { ACCOUNTS_OF_USER, OWNED_ACCOUNT } from './account-rows';
import type { Account } from './entities/account.entity';

export class AccountsService {
  constructor(private readonly dataSource: DataSource) {}

  listForUser(userId: string): Promise<Account[]> {
    return queryPrepared<Account>(this.dataSource, ACCOUNTS_OF_USER, [userId]);
  }

  /** Null unless the account exists and belongs to `userId`: nobody sees another user's account. */
  async findOwned(id: string, userId: string): Promise<Account | null> {
    if (!isUuid(id)) return null;
    const [account] = await queryPrepared<Account>(this.dataSource, OWNED_ACCOUNT, [id, userId]);
    return account ?? null;
  }
}
