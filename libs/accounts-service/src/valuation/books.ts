import { D, roundMoney, type Dec } from '@trading/money';

/** Cash per currency, as banking reports it (the @requires'd `Account.balances`). */
export interface CashInput {
  currency: string;
  cash: string;
  availableToTrade: string;
}

/** The paper market as oms reports it (the @requires'd `Account.market`). */
export interface MarketInput {
  prices: Array<{ symbol: string; currency: string; lastPrice: string; previousClose: string }>;
  /** US dollars per one unit of the currency; USD is 1. */
  fxRates: Array<{ currency: string; usdRate: string }>;
}

export interface HoldingInput {
  symbol: string;
  /** Negative when short. */
  quantity: string;
  currency: string;
}

export interface ValuationInput {
  baseCurrency: string;
  balances: CashInput[];
  positions: HoldingInput[];
  market: MarketInput;
}

/** Everything an account holds in one currency, valued at the market's marks; each holding's value in cents. */
export interface CurrencyBook {
  currency: string;
  cash: Dec;
  availableToTrade: Dec;
  /** Σ quantity × lastPrice of long holdings (≥ 0), each rounded to cents like Position.marketValue. */
  longValue: Dec;
  /** Σ quantity × lastPrice of short holdings (≤ 0). */
  shortValue: Dec;
  /** longValue + shortValue. */
  marketValue: Dec;
  /** Σ of each holding's value now minus its value at the previous close (Position.dayChange). */
  dayChange: Dec;
  positionCount: number;
}

/**
 * Groups cash and holdings by currency (every currency with a balance or a holding), ordered by
 * currency. A holding the market has no mark for, or priced in another currency than the
 * holding's, is an inconsistency between services: it throws (logged and masked as INTERNAL)
 * rather than valuing the holding at zero.
 */
export function booksByCurrency(input: Pick<ValuationInput, 'balances' | 'positions' | 'market'>): CurrencyBook[] {
  const books = new Map<string, CurrencyBook>();
  const book = (currency: string): CurrencyBook => {
    let b = books.get(currency);
    if (!b) {
      const zero = new D(0);
      b = {
        currency,
        cash: zero,
        availableToTrade: zero,
        longValue: zero,
        shortValue: zero,
        marketValue: zero,
        dayChange: zero,
        positionCount: 0,
      };
      books.set(currency, b);
    }
    return b;
  };
  for (const balance of input.balances) {
    const b = book(balance.currency);
    b.cash = b.cash.plus(balance.cash);
    b.availableToTrade = b.availableToTrade.plus(balance.availableToTrade);
  }
  const marks = new Map(input.market.prices.map((m) => [m.symbol, m]));
  for (const position of input.positions) {
    const mark = marks.get(position.symbol);
    if (!mark) throw new Error(`the market has no mark for ${position.symbol}`);
    if (mark.currency !== position.currency)
      throw new Error(`${position.symbol} is held in ${position.currency} but priced in ${mark.currency}`);
    const quantity = new D(position.quantity);
    const value = roundMoney(quantity.times(mark.lastPrice), position.currency);
    const b = book(position.currency);
    if (value.isNegative()) b.shortValue = b.shortValue.plus(value);
    else b.longValue = b.longValue.plus(value);
    b.marketValue = b.marketValue.plus(value);
    b.dayChange = b.dayChange.plus(value.minus(roundMoney(quantity.times(mark.previousClose), position.currency)));
    b.positionCount += 1;
  }
  return [...books.values()].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
}

/**
 * Converts between currencies through their US-dollar rates (cross rates):
 * amount in C → base B = amount × usdRate(C) / usdRate(B). A currency without a rate throws:
 * silently counting it as zero would misstate margin.
 */
export class FxConverter {
  private readonly rates: Map<string, Dec>;
  constructor(rates: MarketInput['fxRates']) {
    this.rates = new Map(rates.map((r) => [r.currency, new D(r.usdRate)]));
    this.rates.set('USD', new D(1));
  }

  convert(amount: Dec, from: string, to: string): Dec {
    if (from === to) return amount;
    return amount.times(this.rate(from)).div(this.rate(to));
  }

  private rate(currency: string): Dec {
    const rate = this.rates.get(currency);
    if (!rate || !rate.isPositive() || rate.isZero()) throw new Error(`no USD rate for ${currency}`);
    return rate;
  }
}
