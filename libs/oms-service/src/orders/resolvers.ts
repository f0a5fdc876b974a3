import DataLoader from 'dataloader';
import { callerOwnsAccount, perRequest, type Resolvers, type SubgraphContext } from '@trading/subgraph';
import type { AccountsClient } from './clients';
import type { OrderView } from './order-store';
import type { OrdersService } from './orders.service';

type ListArgs = { limit?: number; cursor?: string; from?: string; to?: string };

export function ordersResolvers(orders: OrdersService, accounts: AccountsClient): Resolvers {
  return {
    Account: {
      // Anyone on the internal network can send a representation: only the caller's own accounts resolve.
      __resolveReference: async (ref: { id: string }, ctx: SubgraphContext) =>
        typeof ref.id === 'string' &&
        (await callerOwnsAccount(ctx, ref.id.toLowerCase(), (claims, requestId) => accounts.ownedIds(claims, requestId)))
          ? { id: ref.id }
          : null,
      orders: (account: { id: string }, args: ListArgs & { status?: string }) => orders.list(account.id, args),
      order: (account: { id: string }, args: { id: string }) => orders.get(account.id, args.id),
      trades: (account: { id: string }, args: ListArgs & { symbol?: string }) => orders.trades(account.id, args),
      orderRules: (account: { id: string }, args: { symbol?: string }) => orders.rules(account.id, args.symbol),
    },
    Order: {
      // One query for the fills of every order in the answer, not one per order.
      fills: (order: OrderView, _args: unknown, ctx: SubgraphContext) =>
        perRequest(ctx, 'fills', () => new DataLoader((ids: readonly string[]) => orders.fillsOf(ids))).load(order.id),
    },
    Mutation: {
      // Mutations name an account directly: ownership is asked of the accounts subgraph with the caller's claims.
      whatIfOrder: (_: unknown, args: { input: Record<string, unknown> }, ctx: SubgraphContext) =>
        orders.whatIf(ctx.claims, args.input, ctx.requestId),
      placeOrder: (_: unknown, args: { input: Record<string, unknown>; idempotencyKey?: string }, ctx: SubgraphContext) =>
        orders.place(ctx.claims, args.input, args.idempotencyKey, ctx.requestId),
      cancelOrder: (_: unknown, args: { orderId: string }, ctx: SubgraphContext) => orders.cancel(ctx.claims, args.orderId, ctx.requestId),
    },
  } as Resolvers;
}
