import type { SubgraphContext } from '@trading/subgraph';
import type { MarketService, MarketSnapshot } from './market.service';
import type { Resolvers } from '../resolvers-types.generated';

export function marketResolvers(market: MarketService): Resolvers {
  // One snapshot per GraphQL request: a page of positions is priced with one query, and every
  // figure of a request sees the same marks.
  const snapshots = new WeakMap<SubgraphContext, Promise<MarketSnapshot>>();
  const snapshot = (ctx: SubgraphContext) => {
    let s = snapshots.get(ctx);
    if (!s) snapshots.set(ctx, (s = market.snapshot()));
    return s;
  };
  return {
    Account: {
      // Ownership was settled by the accounts subgraph; market data is the same for everyone.
      market: (_account: unknown, _args: unknown, ctx: SubgraphContext) => snapshot(ctx),
    },
    Position: {
      // Prices are market data, not the holder's: no ownership to check here (accounts checks it).
      __resolveReference: async (ref: { accountId: string; symbol: string }, ctx: SubgraphContext) => {
        const mark = (await snapshot(ctx)).prices.find((m) => m.symbol === ref.symbol);
        // A holding in an instrument the market does not list is a bug between services: logged, masked.
        if (!mark) throw new Error(`no instrument ${ref.symbol} for a held position`);
        return { accountId: ref.accountId, symbol: ref.symbol, lastPrice: mark.lastPrice, previousClose: mark.previousClose };
      },
    },
  };
}
