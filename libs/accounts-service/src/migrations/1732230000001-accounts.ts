import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Accounts1732230000001 implements MigrationInterface {
  name = 'Accounts1732230000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE accounts (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL,
        number text NOT NULL UNIQUE,
        type text NOT NULL CHECK (type IN ('CASH', 'MARGIN')),
        status text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'RESTRICTED', 'CLOSED')),
        base_currency char(3) NOT NULL CHECK (base_currency ~ '^[A-Z]{3}$'),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query('CREATE INDEX accounts_user_idx ON accounts (user_id)');
    await q.query(`
      CREATE TABLE positions (
        account_id uuid NOT NULL REFERENCES accounts(id),
        symbol text NOT NULL,
        quantity numeric(20, 8) NOT NULL,
        average_cost numeric(20, 8) NOT NULL CHECK (average_cost >= 0),
        currency char(3) NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (account_id, symbol)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE positions');
    await q.query('DROP TABLE accounts');
  }
}
