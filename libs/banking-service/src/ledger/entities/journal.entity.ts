import { EntitySchema } from 'typeorm';
import type { LedgerBook } from '../ledger';

/** One leg of a journal entry; the legs of an entry sum to zero per currency (checked by PostgreSQL). */
export interface Posting {
  id: string;
  entryId: string;
  accountId: string;
  book: LedgerBook;
  currency: string;
  amount: string;
}

export interface JournalEntry {
  id: string;
  seq: string;
  kind: string;
  description: string;
  fundingTransactionId: string | null;
  holdOrderId: string | null;
  createdAt: Date;
}

export const JournalEntryEntity = new EntitySchema<JournalEntry>({
  name: 'JournalEntry',
  tableName: 'journal_entries',
  columns: {
    id: { type: 'uuid', primary: true, generated: 'uuid' },
    seq: { type: 'bigint', generated: 'increment' },
    kind: { type: 'text' },
    description: { type: 'text' },
    fundingTransactionId: { type: 'uuid', name: 'funding_transaction_id', nullable: true },
    holdOrderId: { type: 'text', name: 'hold_order_id', nullable: true },
    createdAt: { type: 'timestamptz', name: 'created_at', createDate: true },
  },
});

export const PostingEntity = new EntitySchema<Posting>({
  name: 'Posting',
  tableName: 'postings',
  columns: {
    id: { type: 'bigint', primary: true, generated: 'increment' },
    entryId: { type: 'uuid', name: 'entry_id' },
    accountId: { type: 'uuid', name: 'account_id' },
    book: { type: 'text' },
    currency: { type: 'char', length: 3 },
    amount: { type: 'numeric', precision: 20, scale: 8 },
  },
});
