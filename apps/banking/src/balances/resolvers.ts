import type { Resolvers } from '@trading/subgraph';
import { isUuid, parseCurrency } from '../ledger/money';
import type { BalancesService } from './balances.service';

export function balancesResolvers(balances: BalancesService): Resolvers {
  return {
    Account: {
      // Banking only extends Account: ownership was settled by the accounts subgraph, which
      // resolves references only for the caller's own accounts.
      __resolveReference: (ref: { id: string }) => (isUuid(ref.id) ? { id: ref.id } : null),
      balances: (account: { id: string }) => balances.forAccount(account.id),
      balance: (account: { id: string }, args: { currency: string }) => balances.forCurrency(account.id, parseCurrency(args.currency)),
    },
  } as Resolvers;
}
