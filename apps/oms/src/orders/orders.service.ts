import Decimal from 'decimal.js';
import type { DataSource, Repository } from 'typeorm';
import { OrderEntity, type Order } from './entities/order.entity';

export class OrdersService {
  private readonly orders: Repository<Order>;
  constructor(dataSource: DataSource) {
    this.orders = dataSource.getRepository(OrderEntity);
  }

  async forAccount(accountId: string): Promise<Order[]> {
    const rows = await this.orders.find({ where: { accountId }, order: { createdAt: 'DESC' }, take: 100 });
    return rows.map((o) => ({ ...o, quantity: new Decimal(o.quantity).toString(), limitPrice: o.limitPrice === null ? null : new Decimal(o.limitPrice).toString() }));
  }
}
