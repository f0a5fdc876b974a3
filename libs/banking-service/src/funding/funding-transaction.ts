export type FundingType = 'DEPOSIT' | 'WITHDRAWAL';
export type FundingState = 'PENDING' | 'COMPLETED' | 'CANCELLED' | 'REJECTED';
export type SandboxOutcome = 'COMPLETED' | 'REJECTED';

/**
 * A deposit or withdrawal as funding_transactions holds it (read and written with SQL). States:
 * PENDING → COMPLETED | CANCELLED | REJECTED, each end state stamped with its time
 * (PostgreSQL checks state and stamps agree); `clear_after` is when simulated clearing may
 * settle it; `user_id` is who asked (null for seeded deposits).
 */
export interface FundingTransactionRow {
  id: string;
  account_id: string;
  user_id: string | null;
  type: FundingType;
  state: FundingState;
  amount: string;
  currency: string;
  reference: string | null;
  sandbox_outcome: SandboxOutcome | null;
  reject_reason: string | null;
  seq: string;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  cancelled_at: Date | null;
  rejected_at: Date | null;
}
