import { seedAccountsDemo, type AccountsApp } from '@trading/accounts-service';
import type { AuthApp } from '@trading/auth-service';
import { seedBankingDemo, type BankingApp } from '@trading/banking-service';
import { seedOmsDemo, type OmsApp } from '@trading/oms-service';
import type { SettlementService } from './app';
import { DEMO_ACCOUNTS, DEMO_DEPOSITS, DEMO_FX_RATES, DEMO_INSTRUMENTS, DEMO_POSITIONS, DEMO_USERS } from './demo-data';

/** The demo users, accounts, positions, deposits, instruments and FX rates, each written only where it is missing. */
export async function seedDemo(
  auth: AuthApp,
  accounts: SettlementService<AccountsApp>,
  banking: SettlementService<BankingApp>,
  oms: OmsApp,
): Promise<void> {
  for (const user of DEMO_USERS) if (!(await auth.users.findByEmail(user.email))) await auth.users.create(user);
  await seedAccountsDemo(accounts.app!.dataSource, { accounts: DEMO_ACCOUNTS, positions: DEMO_POSITIONS });
  await seedBankingDemo(banking.app!.dataSource, { deposits: DEMO_DEPOSITS });
  await seedOmsDemo(oms.dataSource, { instruments: DEMO_INSTRUMENTS, fxRates: DEMO_FX_RATES });
}
