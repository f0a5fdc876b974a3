import type { Resolvers } from '@trading/subgraph';
import type { InstrumentsService } from './instruments.service';

export function instrumentsResolvers(instruments: InstrumentsService): Resolvers {
  return {
    Query: {
      instruments: () => instruments.list(),
    },
  } as Resolvers;
}
