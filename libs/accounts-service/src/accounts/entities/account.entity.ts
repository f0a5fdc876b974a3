/** An account as the accounts table holds it (read and written with SQL: accounts/account-rows.ts). */
export type AccountType = 'CASH' | 'MARGIN';
export type AccountStatus = 'ACTIVE' | 'RESTRICTED' | 'CLOSED';

export interface Account {
  id: string;
  userId: string;
  /** The human-facing account number shown on statements. */
  number: string;
  type: AccountType;
  status: AccountStatus;
  baseCurrency: string;
  createdAt: Date;
  /** The owner's own name for the account; null when none is set. */
  nickname: string | null;
  /** Whether each fill is confirmed by email. */
  tradeConfirmationEmails: boolean;
}
