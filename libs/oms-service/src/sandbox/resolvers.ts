import type { Resolvers } from '../resolvers-types.generated';
import type { OrderSandbox } from './sandbox.service';

/** The DEV sandbox's mutations: the service checks the token's environment and that the order is the caller's. */
export function sandboxResolvers(sandbox: OrderSandbox): Resolvers {
  return {
    Mutation: {
      sandboxFillOrder: (_, args, ctx) => sandbox.fill(ctx.claims, args.orderId, args.input ?? {}, ctx.requestId),
      sandboxRejectOrder: (_, args, ctx) => sandbox.reject(ctx.claims, args.orderId, args.reason, ctx.requestId),
      sandboxExpireOrder: (_, args, ctx) => sandbox.expire(ctx.claims, args.orderId, ctx.requestId),
    },
  };
}
