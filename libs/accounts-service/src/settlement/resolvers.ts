import { parseSymbol } from '../positions/positions.service';
import type { PositionSettlementService } from './settlement.service';
import type { Resolvers } from '../resolvers-types.generated';

export function settlementResolvers(settlement: PositionSettlementService): Resolvers {
  return {
    Account: {
      // The Account parent is already the caller's own (Query.account / __resolveReference).
      positionSettlement: (account: { id: string }, args: { symbol: string }) =>
        settlement.settlement(account.id, parseSymbol(args.symbol)),
    },
  };
}
