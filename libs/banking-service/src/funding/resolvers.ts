import type { SubgraphContext } from '@trading/subgraph';
import type { FundingFilter, FundingInput, FundingService } from './funding.service';
import type { Resolvers } from '../resolvers-types.generated';

export function fundingResolvers(funding: FundingService): Resolvers {
  const caller = (ctx: SubgraphContext) => ({ claims: ctx.claims, requestId: ctx.requestId });
  return {
    Account: {
      fundingTransactions: (account: { id: string }, args: FundingFilter) => funding.list(account.id, args),
    },
    Mutation: {
      deposit: (_: unknown, args: { input: FundingInput; idempotencyKey?: string | null }, ctx: SubgraphContext) =>
        funding.deposit(caller(ctx), args.input, args.idempotencyKey),
      withdraw: (_: unknown, args: { input: FundingInput; idempotencyKey?: string | null }, ctx: SubgraphContext) =>
        funding.withdraw(caller(ctx), args.input, args.idempotencyKey),
      cancelFundingTransaction: (_: unknown, args: { transactionId: string; idempotencyKey?: string | null }, ctx: SubgraphContext) =>
        funding.cancel(caller(ctx), args.transactionId, args.idempotencyKey),
    },
  };
}
