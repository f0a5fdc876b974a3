import type { DataSource, Repository } from 'typeorm';
import { AccountEntity, type Account } from './entities/account.entity';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
    if (!UUID.test(id)) return null;
    return this.accounts.findOneBy({ id, userId });
  }
}
