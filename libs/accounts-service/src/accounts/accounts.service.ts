import type { DataSource, Repository } from 'typeorm';
import { isUuid } from '@trading/errors';
import { AccountEntity, type Account } from './entities/account.entity';

export class AccountsService {
  private readonly accounts: Repository<Account>;
  constructor(dataSource: DataSource) {
    this.accounts = dataSource.getRepository(AccountEntity);
  }

  listForUser(userId: string): Promise<Account[]> {
    return this.accounts.find({ where: { userId }, order: { createdAt: 'ASC', number: 'ASC' } });
  }

  /** Null unless the account exists and belongs to `userId`: nobody sees another user's account. */
  async findOwned(id: string, userId: string): Promise<Account | null> {
    if (!isUuid(id)) return null;
    return this.accounts.findOneBy({ id, userId });
  }
}
