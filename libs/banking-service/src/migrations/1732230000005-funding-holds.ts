import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The customer books behind every balance (cash, held, unsettled), funding
 * transactions with their states, order holds, and idempotency keys. The ledger's balance
 * trigger from the first migration stays as it is.
 */
export class FundingHolds1732230000005 implements MigrationInterface {
  name = 'FundingHolds1732230000005';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE postings DROP CONSTRAINT postings_book_check');
    await q.query(`ALTER TABLE postings ADD CONSTRAINT postings_book_check
      CHECK (book IN ('CUSTOMER_CASH', 'CUSTOMER_HELD', 'CUSTOMER_UNSETTLED', 'BANK_CLEARING', 'FEES'))`);

    await q.query(`
      CREATE TABLE funding_transactions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        seq bigserial UNIQUE,
        account_id uuid NOT NULL,
        user_id text,
        type text NOT NULL CHECK (type IN ('DEPOSIT', 'WITHDRAWAL')),
        state text NOT NULL CHECK (state IN ('PENDING', 'COMPLETED', 'CANCELLED', 'REJECTED')),
        amount numeric(20, 8) NOT NULL CHECK (amount > 0),
        currency char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
        reference text,
        sandbox_outcome text CHECK (sandbox_outcome IN ('COMPLETED', 'REJECTED')),
        reject_reason text,
        clear_after timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz,
        cancelled_at timestamptz,
        rejected_at timestamptz,
        CHECK ((state = 'COMPLETED') = (completed_at IS NOT NULL)),
        CHECK ((state = 'CANCELLED') = (cancelled_at IS NOT NULL)),
        CHECK ((state = 'REJECTED') = (rejected_at IS NOT NULL)),
        CHECK ((state = 'REJECTED') = (reject_reason IS NOT NULL))
      )`);
    await q.query('CREATE INDEX funding_transactions_account_idx ON funding_transactions (account_id, seq DESC)');
    await q.query(`CREATE INDEX funding_transactions_pending_idx ON funding_transactions (clear_after) WHERE state = 'PENDING'`);

    await q.query(`
      CREATE TABLE holds (
        order_id text PRIMARY KEY,
        account_id uuid NOT NULL,
        user_id text,
        currency char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
        amount numeric(20, 8) NOT NULL CHECK (amount > 0),
        state text NOT NULL CHECK (state IN ('HELD', 'RELEASED', 'CAPTURED')),
        captured_amount numeric(20, 8) CHECK (captured_amount > 0 AND captured_amount <= amount),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((state = 'CAPTURED') = (captured_amount IS NOT NULL))
      )`);

    // Each journal entry says what caused it; seq gives entries a total order for running balances.
    await q.query('ALTER TABLE journal_entries ADD COLUMN seq bigserial UNIQUE');
    await q.query('ALTER TABLE journal_entries ADD COLUMN funding_transaction_id uuid REFERENCES funding_transactions(id)');
    await q.query('ALTER TABLE journal_entries ADD COLUMN hold_order_id text REFERENCES holds(order_id)');
    await q.query(
      'CREATE INDEX journal_entries_funding_idx ON journal_entries (funding_transaction_id) WHERE funding_transaction_id IS NOT NULL',
    );

    await q.query(`
      CREATE TABLE idempotency_keys (
        user_id text NOT NULL,
        key text NOT NULL,
        request_hash text NOT NULL,
        response jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, key)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE idempotency_keys');
    await q.query('ALTER TABLE journal_entries DROP COLUMN hold_order_id, DROP COLUMN funding_transaction_id, DROP COLUMN seq');
    await q.query('DROP TABLE holds');
    await q.query('DROP TABLE funding_transactions');
    await q.query('ALTER TABLE postings DROP CONSTRAINT postings_book_check');
    await q.query(`ALTER TABLE postings ADD CONSTRAINT postings_book_check CHECK (book IN ('CUSTOMER_CASH', 'BANK_CLEARING'))`);
  }
}
