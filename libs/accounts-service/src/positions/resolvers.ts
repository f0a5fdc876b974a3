import { missingScopes } from '@trading/auth';
import { errors } from '@trading/errors';
import { perRequest, type SubgraphContext } from '@trading/subgraph';
import type { AccountsService } from '../accounts/accounts.service';
import { D, formatMoney, formatPrice, roundMoney } from '@trading/money';
import type { Position } from './entities/position.entity';
import type { PositionsService } from './positions.service';
import type { Resolvers } from '../resolvers-types.generated';

/** A position with the marks the gateway fetched from oms for the @requires fields. */
type MarkedPosition = Position & { lastPrice?: string; previousClose?: string };

const markOf = (p: MarkedPosition, field: 'lastPrice' | 'previousClose'): string => {
  const value = p[field];
  // Only reachable when someone bypasses the query planner; a bug, not bad input.
  if (value === undefined || value === null) throw new Error(`Position.${field} missing from the representation of ${p.symbol}`);
  return value;
};

const costBasisOf = (p: Position) => roundMoney(new D(p.quantity).times(p.averageCost), p.currency);
/** quantity × price in the currency's minor units: the same rounding as margin and portfolios use. */
const valueAt = (p: Pick<Position, 'quantity' | 'currency'>, price: string) => roundMoney(new D(p.quantity).times(price), p.currency);

export function positionsResolvers(positions: PositionsService, accounts: AccountsService): Resolvers {
  return {
    Account: {
      positions: (account, args) => positions.page(account.id, args),
      position: (account, { symbol }) => positions.find(account.id, symbol),
    },
    Position: {
      /**
       * The gateway comes back here with the marks to value a position. Resolves only positions
       * of the caller's own accounts, so `_entities` never leaks another user's holding.
       */
      __resolveReference: async (
        ref: { accountId: string; symbol: string; lastPrice?: string; previousClose?: string },
        ctx: SubgraphContext,
      ) => {
        if (missingScopes(ctx.claims.scope, ['read:accounts']).length) throw errors.insufficientScope(['read:accounts']);
        const account = await perRequest(ctx, `account:${ref.accountId}`, () => accounts.findOwned(ref.accountId, ctx.claims.sub));
        if (!account) return null;
        const held = await perRequest(
          ctx,
          `positions:${account.id}`,
          async () => new Map((await positions.all(account.id)).map((p) => [p.symbol, p])),
        );
        const position = held.get(ref.symbol);
        return position ? { ...position, lastPrice: ref.lastPrice, previousClose: ref.previousClose } : null;
      },
      // Each figure is rounded to cents once and the others derive from the rounded ones, so
      // unrealizedPnl = marketValue − costBasis and dayChange = marketValue − value at the previous close, to the cent.
      costBasis: (p: Position) => formatMoney(costBasisOf(p), p.currency),
      realizedPnl: (p: Position) => formatMoney(p.realizedPnl, p.currency),
      updatedAt: (p: Position) => p.updatedAt.toISOString(),
      marketPrice: (p: MarkedPosition) => formatPrice(markOf(p, 'lastPrice'), p.currency),
      marketValue: (p: MarkedPosition) => formatMoney(valueAt(p, markOf(p, 'lastPrice')), p.currency),
      unrealizedPnl: (p: MarkedPosition) => formatMoney(valueAt(p, markOf(p, 'lastPrice')).minus(costBasisOf(p)), p.currency),
      dayChange: (p: MarkedPosition) =>
        formatMoney(valueAt(p, markOf(p, 'lastPrice')).minus(valueAt(p, markOf(p, 'previousClose'))), p.currency),
    },
  };
}
