import type { DataSource } from 'typeorm';
import { AccountEntity, type Account } from './accounts/entities/account.entity';
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
    await tx.getRepository(AccountEntity).upsert(
      data.accounts.map((a) => ({ ...a, status: 'ACTIVE' as const })),
      { conflictPaths: ['id'], skipUpdateIfNoValuesChanged: true },
    );
    await tx
      .getRepository(PositionEntity)
      .upsert(data.positions, { conflictPaths: ['accountId', 'symbol'], skipUpdateIfNoValuesChanged: true });
  });
}
