import { EntitySchema } from 'typeorm';

export type FundingType = 'DEPOSIT' | 'WITHDRAWAL';
export type FundingState = 'PENDING' | 'COMPLETED' | 'CANCELLED' | 'REJECTED';
export type SandboxOutcome = 'COMPLETED' | 'REJECTED';

/**
 * A deposit or withdrawal. States: PENDING → COMPLETED | CANCELLED | REJECTED, each end state
 * stamped with its time (PostgreSQL checks state and stamps agree). `clearAfter` is when
 * simulated clearing may settle it; `userId` is who asked (null for seeded deposits).
 */
export interface FundingTransaction {
  id: string;
  seq: string;
  accountId: string;
  userId: string | null;
  type: FundingType;
  state: FundingState;
  amount: string;
  currency: string;
  reference: string | null;
  sandboxOutcome: SandboxOutcome | null;
  rejectReason: string | null;
  clearAfter: Date;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
  cancelledAt: Date | null;
  rejectedAt: Date | null;
}

export const FundingTransactionEntity = new EntitySchema<FundingTransaction>({
  name: 'FundingTransaction',
  tableName: 'funding_transactions',
  columns: {
    id: { type: 'uuid', primary: true, generated: 'uuid' },
    seq: { type: 'bigint', generated: 'increment' },
    accountId: { type: 'uuid', name: 'account_id' },
    userId: { type: 'text', name: 'user_id', nullable: true },
    type: { type: 'text' },
    state: { type: 'text' },
    amount: { type: 'numeric', precision: 20, scale: 8 },
    currency: { type: 'char', length: 3 },
    reference: { type: 'text', nullable: true },
    sandboxOutcome: { type: 'text', name: 'sandbox_outcome', nullable: true },
    rejectReason: { type: 'text', name: 'reject_reason', nullable: true },
    clearAfter: { type: 'timestamptz', name: 'clear_after' },
    createdAt: { type: 'timestamptz', name: 'created_at' },
    updatedAt: { type: 'timestamptz', name: 'updated_at' },
    completedAt: { type: 'timestamptz', name: 'completed_at', nullable: true },
    cancelledAt: { type: 'timestamptz', name: 'cancelled_at', nullable: true },
    rejectedAt: { type: 'timestamptz', name: 'rejected_at', nullable: true },
  },
});

/** Raw rows as `SELECT * FROM funding_transactions` returns them. */
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
