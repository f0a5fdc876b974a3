import type { FundingService } from '../funding/funding.service';
import type { Resolvers } from '../resolvers-types.generated';

/** The DEV sandbox's mutation: the service checks the token's environment and that the transaction is the caller's. */
export function sandboxResolvers(funding: FundingService): Resolvers {
  return {
    Mutation: {
      sandboxFailFundingTransaction: (_, args, ctx) =>
        funding.failPending({ claims: ctx.claims, requestId: ctx.requestId }, args.transactionId, args.reason),
    },
  };
}
