import { missingScopes } from '@trading/auth';
import { errors } from '@trading/errors';
import type { Resolvers, SubgraphContext } from '@trading/subgraph';
import type { Account } from '../accounts/entities/account.entity';
import type { AccountsService } from '../accounts/accounts.service';
import { D, canonical, money } from '../decimal';
import { perRequest } from '../request-cache';
import type { Position } from './entities/position.entity';
import type { PositionsService } from './positions.service';

/** A position with the marks the gateway fetched from oms for the @requires fields. */
type MarkedPosition = Position & { lastPrice?: string; previousClose?: string };

const markOf = (p: MarkedPosition, field: 'lastPrice' | 'previousClose'): string => {
  const value = p[field];
  // Only reachable when someone bypasses the query planner; a bug, not bad input.
  if (value === undefined || value === null) throw new Error(`Position.${field} missing from the representation of ${p.symbol}`);
  return value;
};

export function positionsResolvers(positions: PositionsService, accounts: AccountsService): Resolvers {
  return {
    Account: {
      positions: (account: Account, args: { limit?: number; cursor?: string }) => positions.page(account.id, args),
      position: (account: Account, { symbol }: { symbol: string }) => positions.find(account.id, symbol),
    },
    Position: {
      /**
       * The gateway comes back here with the marks to value a position. Resolves only positions
       * of the caller's own accounts, so `_entities` never leaks another user's holding.
       */
      __resolveReference: async (ref: { accountId: string; symbol: string; lastPrice?: string; previousClose?: string }, ctx: SubgraphContext) => {
        if (missingScopes(ctx.claims.scope, ['read:accounts']).length) throw errors.insufficientScope(['read:accounts']);
        const account = await perRequest(ctx, `account:${ref.accountId}`, () => accounts.findOwned(ref.accountId, ctx.claims.sub));
        if (!account) return null;
        const held = await perRequest(ctx, `positions:${account.id}`, async () => new Map((await positions.all(account.id)).map((p) => [p.symbol, p])));
        const position = held.get(ref.symbol);
        return position ? { ...position, lastPrice: ref.lastPrice, previousClose: ref.previousClose } : null;
      },
      costBasis: (p: Position) => money(new D(p.quantity).times(p.averageCost)),
      realizedPnl: (p: Position) => money(p.realizedPnl),
      updatedAt: (p: Position) => p.updatedAt.toISOString(),
      marketPrice: (p: MarkedPosition) => canonical(markOf(p, 'lastPrice')),
      marketValue: (p: MarkedPosition) => money(new D(p.quantity).times(markOf(p, 'lastPrice'))),
      unrealizedPnl: (p: MarkedPosition) => money(new D(p.quantity).times(new D(markOf(p, 'lastPrice')).minus(p.averageCost))),
      dayChange: (p: MarkedPosition) => money(new D(p.quantity).times(new D(markOf(p, 'lastPrice')).minus(markOf(p, 'previousClose')))),
    },
  } as Resolvers;
}
