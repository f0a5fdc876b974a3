import type { InstrumentsService } from './instruments.service';
import type { Resolvers } from '../resolvers-types.generated';

export function instrumentsResolvers(instruments: InstrumentsService): Resolvers {
  return {
    Query: {
      instruments: () => instruments.list(),
    },
  };
}
