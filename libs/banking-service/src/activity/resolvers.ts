import type { ActivityService, CashActivityFilter } from './activity.service';
import type { Resolvers } from '../resolvers-types.generated';

export function activityResolvers(activity: ActivityService): Resolvers {
  return {
    Account: {
      cashActivity: (account: { id: string }, args: CashActivityFilter) => activity.list(account.id, args),
    },
  };
}
