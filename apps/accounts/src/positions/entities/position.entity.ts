import { EntitySchema } from 'typeorm';

/** A holding in one instrument; quantity and cost are exact decimals kept as strings. */
export interface Position {
  accountId: string;
  symbol: string;
  quantity: string;
  averageCost: string;
  currency: string;
  updatedAt: Date;
}

export const PositionEntity = new EntitySchema<Position>({
  name: 'Position',
  tableName: 'positions',
  columns: {
    accountId: { type: 'uuid', primary: true, name: 'account_id' },
    symbol: { type: 'text', primary: true },
    quantity: { type: 'numeric', precision: 20, scale: 8 },
    averageCost: { type: 'numeric', precision: 20, scale: 8, name: 'average_cost' },
    currency: { type: 'char', length: 3 },
    updatedAt: { type: 'timestamptz', name: 'updated_at', updateDate: true },
  },
});
