import { EntitySchema } from 'typeorm';

/** A holding in one instrument; quantity, cost and P&L are exact decimals kept as strings. */
export interface Position {
  accountId: string;
  symbol: string;
  /** Negative for a short holding. */
  quantity: string;
  averageCost: string;
  currency: string;
  /** P&L booked by closing fills, in the position's currency. */
  realizedPnl: string;
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
    realizedPnl: { type: 'numeric', precision: 20, scale: 8, name: 'realized_pnl', default: 0 },
    updatedAt: { type: 'timestamptz', name: 'updated_at', updateDate: true },
  },
});
