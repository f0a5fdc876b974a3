import Decimal from 'decimal.js';
import DataLoader from 'dataloader';
import { callerOwnsAccount, perRequest } from '@trading/subgraph';
import type { AccountsDirectory } from '@trading/accounts-directory';
import type { OrderQueries } from './order-queries';
import type { OrdersService } from './orders.service';
import type { Resolvers } from '../resolvers-types.generated';

/** An order's view as the service answers it: what it has filled and where it sits in a group. */
type OrderShape = { filledQuantity: string; orderClass: string; parentOrderId: string | null };
const hasFills = (order: OrderShape) => !new Decimal(order.filledQuantity).isZero();
const hasLegs = (order: OrderShape) => order.orderClass !== 'SIMPLE' && order.parentOrderId === null;

export function ordersResolvers(orders: OrdersService, queries: OrderQueries, accounts: AccountsDirectory): Resolvers {
  return {
    Account: {
      // Anyone on the internal network can send a representation: only the caller's own accounts resolve.
      __resolveReference: async (ref, ctx) =>
        typeof ref.id === 'string' &&
        (await callerOwnsAccount(ctx, ref.id.toLowerCase(), (claims, requestId) => accounts.ownedIds(claims, requestId)))
          ? { id: ref.id }
          : null,
      orders: (account, args) => queries.list(account.id, args),
      order: (account, args) => queries.get(account.id, args.id),
      orderByClientOrderId: (account, args) => queries.byClientOrderId(account.id, args.clientOrderId),
      trades: (account, args) => queries.trades(account.id, args),
      orderRules: (account, args) => orders.rules(account.id, args.symbol),
    },
    Order: {
      // One query for the fills of every order in the answer, not one per order; none for an order
      // that has filled nothing (a trade and the filled quantity are written in one transaction),
      // which is every order just placed to rest: its answer then costs no second read.
      fills: (order, _args, ctx) =>
        hasFills(order)
          ? perRequest(ctx, 'fills', () => new DataLoader((ids: readonly string[]) => queries.fillsOf(ids))).load(order.id)
          : [],
      // Only a BRACKET, OCO or OTO entry has legs (a SIMPLE order cannot be given any, a leg has none of its own).
      legs: (order, _args, ctx) =>
        hasLegs(order) ? perRequest(ctx, 'legs', () => new DataLoader((ids: readonly string[]) => queries.legsOf(ids))).load(order.id) : [],
    },
    Mutation: {
      // Mutations name an account directly: ownership is asked of the accounts subgraph with the caller's claims.
      whatIfOrder: (_, args, ctx) => orders.whatIf(ctx.claims, args.input, ctx.requestId),
      placeOrder: (_, args, ctx) => orders.place(ctx.claims, args.input, args.idempotencyKey, ctx.requestId),
      cancelOrder: (_, args, ctx) => orders.cancel(ctx.claims, args.orderId, ctx.requestId),
      cancelOrderByClientOrderId: (_, args, ctx) =>
        orders.cancelByClientOrderId(ctx.claims, args.accountId, args.clientOrderId, ctx.requestId),
      replaceOrder: (_, args, ctx) => orders.replace(ctx.claims, args.input, args.idempotencyKey, ctx.requestId),
      closePosition: (_, args, ctx) => orders.closePosition(ctx.claims, args.input, args.idempotencyKey, ctx.requestId),
      closeAllPositions: (_, args, ctx) => orders.closeAllPositions(ctx.claims, args.accountId, args.idempotencyKey, ctx.requestId),
    },
  };
}
