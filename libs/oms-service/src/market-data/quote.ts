import { createHash } from 'node:crypto';
import Decimal from 'decimal.js';
import { canonical, formatPrice } from '@trading/money';

/** One instrument's simulated top of book. Decimals are canonical strings; sizes are in units (multiples of the lot). */
export interface Quote {
  symbol: string;
  currency: string;
  lastPrice: string;
  bid: string;
  ask: string;
  bidSize: string;
  askSize: string;
  /** When the last price was set (RFC 3339, UTC). */
  timestamp: string;
}

/** What a quote is made from: the instruments row. */
export interface QuoteSource {
  symbol: string;
  currency: string;
  lastPrice: string;
  tickSize: string;
  lotSize: string;
  priceAt: Date | string;
}

/**
 * The bid and ask around a last price, as `quoteOf` quotes them: what market orders fill at
 * (buys at the ask, sells at the bid) and what a market buy's hold is reckoned from.
 */
export function bidAsk(lastPrice: Decimal.Value, tickSize: string, spread: string): { bid: Decimal; ask: Decimal } {
  const tick = new Decimal(tickSize);
  const last = new Decimal(lastPrice);
  const halfTicks = Decimal.max(last.times(spread).div(2).div(tick).ceil(), 1);
  return {
    bid: Decimal.max(last.minus(halfTicks.times(tick)), Decimal.min(tick, last)),
    ask: last.plus(halfTicks.times(tick)),
  };
}

/**
 * The paper market's simulated book around the last price: bid and ask sit `spread / 2` of the
 * price away on either side, rounded up to whole ticks and at least one tick, so
 * bid < last < ask on the tick grid. Only a last price of one tick cannot have a bid below it
 * (prices are positive): then bid = last. Sizes are deterministic in (symbol, side, price): 1 to
 * 10 hundred lots, the same every time the same price is quoted.
 */
export function quoteOf(source: QuoteSource, spread: string): Quote {
  const last = new Decimal(source.lastPrice);
  const { bid, ask } = bidAsk(last, source.tickSize, spread);
  const size = (side: string) => {
    const h = createHash('sha256').update(`${source.symbol}:${side}:${last.toFixed()}`).digest();
    return canonical(new Decimal(source.lotSize).times(100 * (1 + (h.readUInt32BE(0) % 10))).toFixed());
  };
  return {
    symbol: source.symbol,
    currency: source.currency,
    lastPrice: formatPrice(last.toFixed(), source.currency, source.tickSize),
    bid: formatPrice(bid.toFixed(), source.currency, source.tickSize),
    ask: formatPrice(ask.toFixed(), source.currency, source.tickSize),
    bidSize: size('bid'),
    askSize: size('ask'),
    timestamp: new Date(source.priceAt).toISOString(),
  };
}
