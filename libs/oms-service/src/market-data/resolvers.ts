import type { Resolvers } from '../resolvers-types.generated';
import type { MarketDataService } from './market-data.service';

/** Market data is the same for every caller: no ownership to check, only the scope (read:market). */
export function marketDataResolvers(market: MarketDataService): Resolvers {
  return {
    Query: {
      marketQuotes: (_root, { symbols, skipUnknown }) => market.quotes(symbols, skipUnknown ?? false),
      marketBars: (_root, args) => market.bars(args),
      marketBarSets: (_root, args) => market.barSets(args),
      marketClock: () => market.clock(),
      marketCalendar: (_root, args) => market.calendar(args),
      marketInstruments: () => market.instrumentList(),
      marketInstrument: (_root, { symbol }) => market.instrument(symbol),
    },
  };
}
