import { perRequest, type SubgraphContext } from '@trading/subgraph';
import type { Account } from '../accounts/entities/account.entity';
import type { PositionsService } from '../positions/positions.service';

import type { CashInput, MarketInput, ValuationInput } from './books';
import { computeMargin } from './margin';
import { computePortfolios } from './portfolios';
import type { Resolvers } from '../resolvers-types.generated';

/** An account with the fields the gateway fetched from banking and oms for @requires. */
type ValuedAccount = Account & { cashForValuation?: CashInput[]; market?: MarketInput };

export function valuationResolvers(positions: PositionsService): Resolvers {
  const inputs = async (account: ValuedAccount, ctx: SubgraphContext): Promise<ValuationInput> => {
    // Only missing when someone bypasses the query planner; a bug, not bad input.
    if (!account.cashForValuation || !account.market)
      throw new Error('Account.cashForValuation and Account.market are required to value an account');
    return {
      baseCurrency: account.baseCurrency,
      balances: account.cashForValuation,
      market: account.market,
      positions: await perRequest(ctx, `holdings:${account.id}`, () => positions.all(account.id)),
    };
  };
  return {
    Account: {
      margin: async (account: ValuedAccount, _: unknown, ctx: SubgraphContext) =>
        computeMargin({ ...(await inputs(account, ctx)), accountType: account.type, asOf: new Date() }),
      portfolios: async (account: ValuedAccount, _: unknown, ctx: SubgraphContext) =>
        computePortfolios({ ...(await inputs(account, ctx)), asOf: new Date() }),
    },
  };
}
