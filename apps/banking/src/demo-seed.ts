import type { DataSource } from 'typeorm';
import { BalancesService } from './balances/balances.service';

export interface BankingDemoData {
  deposits: Array<{ accountId: string; currency: string; amount: string }>;
}

/** Demo cash for the all-in-one mode: each opening deposit is booked once, however often we start. */
export async function seedBankingDemo(dataSource: DataSource, data: BankingDemoData): Promise<void> {
  const balances = new BalancesService(dataSource);
  for (const d of data.deposits) {
    const description = `demo opening deposit ${d.accountId} ${d.currency}`;
    const [{ count }] = await dataSource.query('SELECT count(*)::int AS count FROM journal_entries WHERE description = $1', [description]);
    if (!count) await balances.deposit(d.accountId, d.currency, d.amount, description);
  }
}
