import { reachesAccount } from '@trading/auth';
import type { AccountsService } from './accounts.service';
import type { Account } from './entities/account.entity';
import type { Resolvers } from '../resolvers-types.generated';

export function accountsResolvers(accounts: AccountsService): Resolvers {
  return {
    Query: {
      accounts: (_: unknown, __: unknown, { claims }) => accounts.listForCaller(claims),
      account: (_: unknown, { id }: { id: string }, { claims }) => accounts.findForCaller(id, claims),
    },
    Mutation: {
      updateAccountSettings: (_: unknown, { accountId, input }, { claims }) => accounts.updateSettings(accountId, claims, input),
    },
    Account: {
      // Entity references from other subgraphs resolve only to the caller's own accounts, and
      // only to those the token was given (another is null here, as someone else's is). The representation may carry fields other subgraphs resolved for @requires (balances,
      // market): keep them beside the stored account.
      __resolveReference: async (ref: { id: string }, { claims }) => {
        const account = reachesAccount(claims, ref.id) ? await accounts.findForCaller(ref.id, claims) : null;
        return account && { ...ref, ...account };
      },
      createdAt: (account: Account) => account.createdAt.toISOString(),
    },
  };
}
