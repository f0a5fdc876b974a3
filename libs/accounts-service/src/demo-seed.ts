import type { DataSource } from 'typeorm';
import type { Account } from './accounts/entities/account.entity';
import type { Position } from './positions/entities/position.entity';

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
    for (const p of data.positions)
      await tx.query(
        `INSERT INTO positions (account_id, symbol, quantity, average_cost, currency, realized_pnl) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (account_id, symbol) DO NOTHING`,
        [p.accountId, p.symbol, p.quantity, p.averageCost, p.currency, p.realizedPnl ?? '0'],
      );
  });
}
