import type { AccountType } from '../accounts/entities/account.entity';
import { MARGIN_RULES } from '@trading/accounts-directory';
import { D, formatMoney, roundMoney, type Dec } from '@trading/money';
import { booksByCurrency, FxConverter, type CurrencyBook, type ValuationInput } from './books';

/**
 * Margin rules (the rates: MARGIN_RULES). Requirements are fractions of the absolute market value of the holdings.
 *
 * CASH accounts: nothing is borrowed. Initial = maintenance = 100% of the market value held
 * (a cash account cannot be short; should a short appear it is charged 100% too), and buying
 * power is the cash available to trade (cash net of holds for open orders and withdrawals).
 *
 * MARGIN accounts (Reg T style): initial 50% and maintenance 25% of long market value; shorts
 * initial 50% and maintenance 30% of |short market value|. (Reg T states the short initial
 * requirement as 150% of the short's value against the credit balance, which already holds the
 * 100% of proceeds: that is 50% of equity, the figure used here.) Buying power is the equity
 * above the initial requirement, levered at the 50% initial rate: max(0, equity − initial) / 0.5.
 *
 * For both: equity = cash + market value (shorts count negative), excess liquidity =
 * equity − maintenance. Figures are computed per currency, and `total` converts every
 * currency's cash, market value and requirements to the base currency through USD cross rates
 * and applies the rules to the sums (so a deficit in one currency is offset by another).
 *
 * Rounding: holdings are valued in cents (as Position.marketValue), requirements and converted
 * amounts are rounded to cents (half-up) once, and equity, excess liquidity and buying power are
 * derived from those rounded figures, so the figures shown add up exactly.
 */
/** The leverage denominator of buying power for MARGIN accounts. */
const MARGIN_BUYING_POWER_RATE = MARGIN_RULES.MARGIN.longInitial;

interface MarginFigures {
  currency: string;
  cash: string;
  marketValue: string;
  equity: string;
  initialRequirement: string;
  maintenanceRequirement: string;
  excessLiquidity: string;
  buyingPower: string;
}

export interface Margin {
  baseCurrency: string;
  total: MarginFigures;
  byCurrency: MarginFigures[];
  asOf: string;
}

interface Sums {
  cash: Dec;
  availableToTrade: Dec;
  marketValue: Dec;
  initial: Dec;
  maintenance: Dec;
}

export function computeMargin(input: ValuationInput & { accountType: AccountType; asOf: Date }): Margin {
  const rules = MARGIN_RULES[input.accountType];
  const requirement = (b: CurrencyBook, long: string, short: string) => b.longValue.times(long).plus(b.shortValue.abs().times(short));
  const sumsOf = (b: CurrencyBook): Sums => ({
    cash: b.cash,
    availableToTrade: b.availableToTrade,
    marketValue: b.marketValue,
    initial: requirement(b, rules.longInitial, rules.shortInitial),
    maintenance: requirement(b, rules.longMaintenance, rules.shortMaintenance),
  });

  const figures = (currency: string, exact: Sums): MarginFigures => {
    const rounded = (value: Dec) => roundMoney(value, currency);
    const money = (value: Dec) => formatMoney(value, currency);
    const s: Sums = {
      cash: rounded(exact.cash),
      availableToTrade: rounded(exact.availableToTrade),
      marketValue: rounded(exact.marketValue),
      initial: rounded(exact.initial),
      maintenance: rounded(exact.maintenance),
    };
    const equity = s.cash.plus(s.marketValue);
    const buyingPower =
      input.accountType === 'CASH' ? D.max(0, s.availableToTrade) : D.max(0, equity.minus(s.initial)).div(MARGIN_BUYING_POWER_RATE);
    return {
      currency,
      cash: money(s.cash),
      marketValue: money(s.marketValue),
      equity: money(equity),
      initialRequirement: money(s.initial),
      maintenanceRequirement: money(s.maintenance),
      excessLiquidity: money(equity.minus(s.maintenance)),
      buyingPower: money(buyingPower),
    };
  };

  const fx = new FxConverter(input.market.fxRates);
  const books = booksByCurrency(input);
  const zero = new D(0);
  const total: Sums = { cash: zero, availableToTrade: zero, marketValue: zero, initial: zero, maintenance: zero };
  for (const b of books) {
    const s = sumsOf(b);
    for (const key of Object.keys(total) as Array<keyof Sums>)
      total[key] = total[key].plus(fx.convert(roundMoney(s[key], b.currency), b.currency, input.baseCurrency));
  }
  return {
    baseCurrency: input.baseCurrency,
    total: figures(input.baseCurrency, total),
    byCurrency: books.map((b) => figures(b.currency, sumsOf(b))),
    asOf: input.asOf.toISOString(),
  };
}
