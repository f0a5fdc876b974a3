import type { DataSource } from 'typeorm';
import type { Account } from './accounts/entities/account.entity';
import { PositionEntity, type Position } from './positions/entities/position.entity';

export interface AccountsDemoData {
  accounts: Array<Pick<Account, 'id' | 'userId' | 'number' | 'type' | 'baseCurrency'>>;
  positions: Array<
    Pick<Position, 'accountId' | 'symbol' | 'quantity' | 'averageCost' | 'currency'> & Partial<Pick<Position, 'realizedPnl'>>
  >;
}

/** Demo data for the all-in-one mode; idempotent, so a second start keeps what is there. */
export async function seedAccountsDemo(dataSource: DataSource, data: AccountsDemoData): Promise<void> {
  await dataSource.transaction(async (tx) => {
    for (const a of data.accounts)
      await tx.query(
        `INSERT INTO accounts (id, user_id, number, type, status, base_currency) VALUES ($1, $2, $3, $4, 'ACTIVE', $5)
         ON CONFLICT (id) DO NOTHING`,
        [a.id, a.userId, a.number, a.type, a.baseCurrency],
      );
    await tx
      .getRepository(PositionEntity)
      .upsert(data.positions, { conflictPaths: ['accountId', 'symbol'], skipUpdateIfNoValuesChanged: true });
  });
}
