import { bad, refused } from '../order-rules';
import { checkExitPrices, checkPairLegReplace, exitLegs, groupLegBodies, type OrderClassRules } from './legs';

/**
 * BRACKET: an entry with a take-profit and a stop-loss, on the opposite side at the same
 * quantity, that wait (PENDING) for the entry to fill and then cancel each other. The entry is
 * not replaced; its exits are, once it has filled, as a pair's legs.
 */
export const bracket: OrderClassRules = {
  legs(parent, takeProfitGiven, stopLossGiven) {
    const [takeProfit, stopLoss] = groupLegBodies('BRACKET', parent, takeProfitGiven, stopLossGiven);
    if (!takeProfit) throw bad('takeProfit', 'A BRACKET order needs takeProfit');
    if (!stopLoss) throw bad('stopLoss', 'A BRACKET order needs stopLoss');
    const legs = exitLegs(parent, takeProfit, stopLoss);
    checkExitPrices(legs[0]!.request.side, legs[0]!.request.limitPrice!, legs[1]!.request.stopPrice!);
    return legs;
  },
  checkReplace(existing, request) {
    // The entry is the one order of the group outside the exits' pair.
    if (!existing.oco_group_id)
      throw refused(
        'orderId',
        "A BRACKET order's entry cannot be replaced (its exits can, once it has filled); cancel it and place a new one",
      );
    checkPairLegReplace(existing, request);
  },
};
