import type { Resolvers } from '@trading/subgraph';
import type { Order } from './entities/order.entity';
import type { OrdersService } from './orders.service';

export function ordersResolvers(orders: OrdersService): Resolvers {
  return {
    Account: {
      // Ownership was settled by the accounts subgraph, which resolves only the caller's accounts.
      __resolveReference: (ref: { id: string }) => ({ id: ref.id }),
      orders: (account: { id: string }) => orders.forAccount(account.id),
    },
    Order: {
      createdAt: (order: Order) => order.createdAt.toISOString(),
    },
  } as Resolvers;
}
