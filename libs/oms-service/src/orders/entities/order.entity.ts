import { EntitySchema } from 'typeorm';

export type OrderSide = 'BUY' | 'SELL';
export type OrderStatus = 'ACCEPTED' | 'NEW' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELLED' | 'REJECTED' | 'EXPIRED';

/** The core of an orders row; the order service reads and writes the whole row with SQL (see order-store.ts). */
export interface Order {
  id: string;
  accountId: string;
  clientOrderId: string;
  symbol: string;
  side: OrderSide;
  type: string;
  timeInForce: string;
  quantity: string;
  limitPrice: string | null;
  status: OrderStatus;
  createdAt: Date;
}

export const OrderEntity = new EntitySchema<Order>({
  name: 'Order',
  tableName: 'orders',
  columns: {
    id: { type: 'uuid', primary: true, generated: 'uuid' },
    accountId: { type: 'uuid', name: 'account_id' },
    clientOrderId: { type: 'text', name: 'client_order_id' },
    symbol: { type: 'text' },
    side: { type: 'text' },
    type: { type: 'text' },
    timeInForce: { type: 'text', name: 'time_in_force' },
    quantity: { type: 'numeric', precision: 20, scale: 8 },
    limitPrice: { type: 'numeric', precision: 20, scale: 8, name: 'limit_price', nullable: true },
    status: { type: 'text' },
    createdAt: { type: 'timestamptz', name: 'created_at', createDate: true },
  },
});
