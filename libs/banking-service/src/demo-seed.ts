import type { DataSource } from 'typeorm';
import { bookCompletedDeposit } from './funding/funding.service';

export interface BankingDemoData {
  deposits: Array<{ accountId: string; currency: string; amount: string }>;
}

/**
 * Demo cash for the all-in-one mode: each opening deposit is booked once, however often we
 * start, as a COMPLETED deposit (a funding transaction and its journal entry).
 */
export async function seedBankingDemo(dataSource: DataSource, data: BankingDemoData): Promise<void> {
  for (const d of data.deposits) {
    const description = `demo opening deposit ${d.accountId} ${d.currency}`;
    const [{ count }] = await dataSource.query('SELECT count(*)::int AS count FROM journal_entries WHERE description = $1', [description]);
    if (!count) await bookCompletedDeposit(dataSource, d.accountId, d.currency, d.amount, description);
  }
}
