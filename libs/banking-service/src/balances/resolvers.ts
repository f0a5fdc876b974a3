import { callerOwnsAccount, type SubgraphContext } from '@trading/subgraph';
import { parseCurrency } from '@trading/money';
import { isUuid } from '@trading/errors';
import type { AccountsDirectory } from '@trading/accounts-directory';
import type { BalancesService } from './balances.service';
import type { Resolvers } from '../resolvers-types.generated';

export function balancesResolvers(balances: BalancesService, ownership: AccountsDirectory): Resolvers {
  return {
    Account: {
      // Anyone on the internal network can send a representation: only the caller's own accounts resolve.
      __resolveReference: async (ref: { id: string }, ctx: SubgraphContext) =>
        isUuid(ref.id) && (await callerOwnsAccount(ctx, ref.id.toLowerCase(), (claims, requestId) => ownership.ownedIds(claims, requestId)))
          ? { id: ref.id }
          : null,
      balances: (account: { id: string }) => balances.forAccount(account.id),
      cashForValuation: (account: { id: string }) => balances.forAccount(account.id),
      balance: (account: { id: string }, args: { currency: string }) => balances.forCurrency(account.id, parseCurrency(args.currency)),
    },
  };
}
