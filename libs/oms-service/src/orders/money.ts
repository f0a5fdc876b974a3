import Decimal from 'decimal.js';
import { roundMoney } from '@trading/money';

/** What an order pays to trade: `rate` of its traded value, but at least `minimum` once it trades at all. */
export interface CommissionSchedule {
  rate: string;
  minimum: string;
}

/**
 * Commission on an order's cumulative traded value, rounded once to the currency's minor unit.
 * Fills are charged the difference of this function over the order's cumulative value, so an
 * order's total commission never depends on how it was split into fills (the first fill pays
 * the minimum, later ones only what the rate adds beyond it), and the hold, taken on the
 * largest possible value, always covers it.
 */
export function commissionOn(value: Decimal.Value, schedule: CommissionSchedule, currency: string): Decimal {
  const traded = new Decimal(value);
  if (traded.lte(0)) return new Decimal(0);
  return Decimal.max(roundMoney(traded.times(schedule.rate), currency), roundMoney(schedule.minimum, currency));
}

/** What one fill adds to an order whose cumulative traded value goes from `before` to `after`. */
export function fillAmounts(
  before: Decimal.Value,
  after: Decimal.Value,
  schedule: CommissionSchedule,
  currency: string,
): { gross: Decimal; commission: Decimal } {
  return {
    gross: roundMoney(after, currency).minus(roundMoney(before, currency)),
    commission: commissionOn(after, schedule, currency).minus(commissionOn(before, schedule, currency)),
  };
}
