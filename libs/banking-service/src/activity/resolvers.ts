import type { Resolvers } from '@trading/subgraph';
import type { ActivityService, CashActivityFilter } from './activity.service';

export function activityResolvers(activity: ActivityService): Resolvers {
  return {
    Account: {
      cashActivity: (account: { id: string }, args: CashActivityFilter) => activity.list(account.id, args),
    },
  } as Resolvers;
}
