import type { Resolvers } from '@trading/subgraph';
import type { Account } from '../accounts/entities/account.entity';
import type { PositionsService } from './positions.service';

export function positionsResolvers(positions: PositionsService): Resolvers {
  return {
    Account: {
      positions: (account: Account) => positions.forAccount(account.id),
    },
  } as Resolvers;
}
