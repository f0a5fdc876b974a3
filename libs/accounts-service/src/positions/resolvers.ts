import { missingScopes, reachesAccount } from '@trading/auth';
import { errors } from '@trading/errors';
import { perRequest, type SubgraphContext } from '@trading/subgraph';
import type { AccountsService } from '../accounts/accounts.service';
import { canonical, D, formatMoney, formatPrice, roundMoney, type Dec } from '@trading/money';
import type { Position } from './entities/position.entity';
import type { PositionsService } from './positions.service';
import type { Resolvers } from '../resolvers-types.generated';

/** A position with what the gateway fetched from oms for the @requires fields: the marks, and what working sells promise. */
type MarkedPosition = Position & { lastPrice?: string; previousClose?: string; openSellQuantity?: string };

const markOf = (p: MarkedPosition, field: 'lastPrice' | 'previousClose' | 'openSellQuantity'): string => {
  const value = p[field];
  // Only reachable when someone bypasses the query planner; a bug, not bad input.
  if (value === undefined || value === null) throw new Error(`Position.${field} missing from the representation of ${p.symbol}`);
  return value;
};

const costBasisOf = (p: Position) => roundMoney(new D(p.quantity).times(p.averageCost), p.currency);
/** quantity × price in the currency's minor units: the same rounding as margin and portfolios use. */
const valueAt = (p: Pick<Position, 'quantity' | 'currency'>, price: string) => roundMoney(new D(p.quantity).times(price), p.currency);
/** A ratio in percent, two decimals half-up (as portfolios' percentages); null where the base is zero and a ratio means nothing. */
const percentOf = (part: Dec, base: Dec): string | null => (base.isZero() ? null : part.div(base).times(100).toFixed(2));

export function positionsResolvers(positions: PositionsService, accounts: AccountsService): Resolvers {
  return {
    Account: {
      positions: (account, args) => positions.page(account.id, args),
      position: (account, { symbol }) => positions.find(account.id, symbol),
    },
    Position: {
      /**
       * The gateway comes back here with the marks to value a position. Resolves only positions
       * of the caller's own accounts that the token reaches, so `_entities` never leaks another user's
       * holding, nor one of an account the user did not give this token.
       */
      __resolveReference: async (
        ref: { accountId: string; symbol: string; lastPrice?: string; previousClose?: string; openSellQuantity?: string },
        ctx: SubgraphContext,
      ) => {
        if (missingScopes(ctx.claims.scope, ['read:accounts']).length) throw errors.insufficientScope(['read:accounts']);
        if (!reachesAccount(ctx.claims, ref.accountId)) return null;
        const account = await perRequest(ctx, `account:${ref.accountId}`, () => accounts.findForCaller(ref.accountId, ctx.claims));
        if (!account) return null;
        const held = await perRequest(
          ctx,
          `positions:${account.id}`,
          async () => new Map((await positions.all(account.id)).map((p) => [p.symbol, p])),
        );
        const position = held.get(ref.symbol);
        return position
          ? { ...position, lastPrice: ref.lastPrice, previousClose: ref.previousClose, openSellQuantity: ref.openSellQuantity }
          : null;
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
      // From the figures as shown (cents), so a client dividing unrealizedPnl by costBasis gets the same
      // percentage; the absolute cost, so a short that lost shows a negative percentage as a long does.
      unrealizedPnlPercent: (p: MarkedPosition) => {
        const cost = costBasisOf(p);
        return percentOf(valueAt(p, markOf(p, 'lastPrice')).minus(cost), cost.abs());
      },
      // The instrument's move, whatever the holding: the same for every account holding it.
      dayChangePercent: (p: MarkedPosition) => {
        const previousClose = new D(markOf(p, 'previousClose'));
        return percentOf(new D(markOf(p, 'lastPrice')).minus(previousClose), previousClose);
      },
      // Settlement reaches accounts a moment after a fill, so working sells can briefly promise more
      // than the quantity shown here (a bracket's exit for an entry just bought): then nothing is free.
      quantityAvailable: (p: MarkedPosition) => canonical(D.max(0, new D(p.quantity).minus(markOf(p, 'openSellQuantity')))),
    },
  };
}
