import { EntitySchema } from 'typeorm';

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
}

export const AccountEntity = new EntitySchema<Account>({
  name: 'Account',
  tableName: 'accounts',
  columns: {
    id: { type: 'uuid', primary: true, generated: 'uuid' },
    userId: { type: 'uuid', name: 'user_id' },
    number: { type: 'text', unique: true },
    type: { type: 'text' },
    status: { type: 'text' },
    baseCurrency: { type: 'char', length: 3, name: 'base_currency' },
    createdAt: { type: 'timestamptz', name: 'created_at', createDate: true },
  },
});
