import { D, formatMoney, roundMoney, type Dec } from '@trading/money';
import { booksByCurrency, FxConverter, type ValuationInput } from './books';

interface Portfolio {
  currency: string;
  cash: string;
  marketValue: string;
  totalValue: string;
  totalValueInBase: string;
  allocationPercent: string;
  dayChange: string;
  dayChangePercent: string;
  positionCount: number;
}

export interface PortfolioSummary {
  baseCurrency: string;
  totalValue: string;
  dayChange: string;
  dayChangePercent: string;
  portfolios: Portfolio[];
  asOf: string;
}

/**
 * One portfolio per currency (cash and holdings in that currency), ordered by currency.
 *
 * - totalValue = cash + market value (holdings valued in cents, as Position.marketValue);
 *   totalValueInBase converts it through USD cross rates, rounded to cents, and the summary's
 *   totalValue and dayChange are the sums of the portfolios' base-currency figures.
 * - dayChange = Σ quantity × (lastPrice − previousClose); dayChangePercent = dayChange / the
 *   value at the previous close (totalValue − dayChange) × 100, "0.00" when that is zero.
 * - allocationPercent = totalValueInBase / Σ totalValueInBase × 100, rounded to two decimals
 *   by largest remainder so the allocations add up to exactly 100.00 (all "0.00" when the
 *   account's total value is zero or negative, where a share of it means nothing).
 */
export function computePortfolios(input: ValuationInput & { asOf: Date }): PortfolioSummary {
  const fx = new FxConverter(input.market.fxRates);
  const rows = booksByCurrency(input).map((b) => {
    const totalValue = roundMoney(b.cash, b.currency).plus(b.marketValue);
    const inBase = (value: Dec) => roundMoney(fx.convert(value, b.currency, input.baseCurrency), input.baseCurrency);
    return { book: b, totalValue, inBase: inBase(totalValue), dayChangeInBase: inBase(b.dayChange) };
  });
  const total = rows.reduce((sum, r) => sum.plus(r.inBase), new D(0));
  const dayChange = rows.reduce((sum, r) => sum.plus(r.dayChangeInBase), new D(0));
  const allocations = allocate(
    rows.map((r) => r.inBase),
    total,
  );
  return {
    baseCurrency: input.baseCurrency,
    totalValue: formatMoney(total, input.baseCurrency),
    dayChange: formatMoney(dayChange, input.baseCurrency),
    dayChangePercent: percentChange(dayChange, total),
    portfolios: rows.map((r, i) => ({
      currency: r.book.currency,
      cash: formatMoney(r.book.cash, r.book.currency),
      marketValue: formatMoney(r.book.marketValue, r.book.currency),
      totalValue: formatMoney(r.totalValue, r.book.currency),
      totalValueInBase: formatMoney(r.inBase, input.baseCurrency),
      allocationPercent: allocations[i]!,
      dayChange: formatMoney(r.book.dayChange, r.book.currency),
      dayChangePercent: percentChange(r.book.dayChange, r.totalValue),
      positionCount: r.book.positionCount,
    })),
    asOf: input.asOf.toISOString(),
  };
}

/** change as a percentage of the value before it: change / (now − change) × 100. */
function percentChange(change: Dec, now: Dec): string {
  const before = now.minus(change);
  return before.isZero() ? '0.00' : change.div(before).times(100).toFixed(2);
}

/** Percentages in hundredths, largest remainder first, so that they sum to exactly 100.00. */
export function allocate(parts: Dec[], total: Dec): string[] {
  if (!total.isPositive() || total.isZero()) return parts.map(() => '0.00');
  const exact = parts.map((p) => p.div(total).times(10000)); // in hundredths of a percent
  const floors = exact.map((e) => e.floor());
  let missing = new D(10000).minus(floors.reduce((s, f) => s.plus(f), new D(0))).toNumber(); // an integer from 0 to parts.length − 1
  const order = exact
    .map((e, i) => ({ i, remainder: e.minus(floors[i]!) }))
    .sort((a, b) => b.remainder.comparedTo(a.remainder) || a.i - b.i);
  for (const { i } of order) {
    if (missing <= 0) break;
    floors[i] = floors[i]!.plus(1);
    missing -= 1;
  }
  return floors.map((f) => f.div(100).toFixed(2));
}
