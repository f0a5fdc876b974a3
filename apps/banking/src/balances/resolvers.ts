import type { Resolvers } from '@trading/subgraph';
import type { BalancesService } from './balances.service';

export function balancesResolvers(balances: BalancesService): Resolvers {
  return {
    Account: {
      // Banking only extends Account: ownership was settled by the accounts subgraph, which
      // resolves references only for the caller's own accounts.
      __resolveReference: (ref: { id: string }) => ({ id: ref.id }),
      balances: (account: { id: string }) => balances.forAccount(account.id),
    },
  } as Resolvers;
}
