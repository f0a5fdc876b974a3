import type { AccountsService } from './accounts.service';
import type { Account } from './entities/account.entity';
import type { Resolvers } from '../resolvers-types.generated';

export function accountsResolvers(accounts: AccountsService): Resolvers {
  return {
    Query: {
      accounts: (_: unknown, __: unknown, { claims }) => accounts.listForUser(claims.sub),
      account: (_: unknown, { id }: { id: string }, { claims }) => accounts.findOwned(id, claims.sub),
    },
    Mutation: {
      updateAccountSettings: (_: unknown, { accountId, input }, { claims }) => accounts.updateSettings(accountId, claims.sub, input),
    },
    Account: {
      // Entity references from other subgraphs resolve only to the caller's own accounts.
      // The representation may carry fields other subgraphs resolved for @requires (balances,
      // market): keep them beside the stored account.
      __resolveReference: async (ref: { id: string }, { claims }) => {
        const account = await accounts.findOwned(ref.id, claims.sub);
        return account && { ...ref, ...account };
      },
      createdAt: (account: Account) => account.createdAt.toISOString(),
    },
  };
}
