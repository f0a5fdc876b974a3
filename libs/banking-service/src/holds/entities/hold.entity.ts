import { EntitySchema } from 'typeorm';

export type HoldState = 'HELD' | 'RELEASED' | 'CAPTURED';

/**
 * Cash reserved for one order (keyed by the OMS's order id): HELD → RELEASED | CAPTURED.
 * A capture pays out the captured part and releases the rest in the same journal entry.
 */
export interface Hold {
  orderId: string;
  accountId: string;
  userId: string | null;
  currency: string;
  amount: string;
  state: HoldState;
  capturedAmount: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const HoldEntity = new EntitySchema<Hold>({
  name: 'Hold',
  tableName: 'holds',
  columns: {
    orderId: { type: 'text', name: 'order_id', primary: true },
    accountId: { type: 'uuid', name: 'account_id' },
    userId: { type: 'text', name: 'user_id', nullable: true },
    currency: { type: 'char', length: 3 },
    amount: { type: 'numeric', precision: 20, scale: 8 },
    state: { type: 'text' },
    capturedAmount: { type: 'numeric', name: 'captured_amount', precision: 20, scale: 8, nullable: true },
    createdAt: { type: 'timestamptz', name: 'created_at' },
    updatedAt: { type: 'timestamptz', name: 'updated_at' },
  },
});
