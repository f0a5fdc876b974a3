import { bad, refused } from '../order-rules';
import { checkExitPrices, checkPairLegReplace, groupLegBodies, parseLeg, type OrderClassRules } from './legs';

/**
 * OCO: the order itself is the LIMIT (take-profit) leg, `stopLoss` a stop on the same side and
 * quantity; both work at once and cancel each other. Either leg is replaced as a pair's leg.
 */
export const oco: OrderClassRules = {
  legs(parent, takeProfitGiven, stopLossGiven) {
    const [takeProfit, stopLoss] = groupLegBodies('OCO', parent, takeProfitGiven, stopLossGiven);
    if (parent.type !== 'LIMIT') throw refused('type', 'An OCO order is a LIMIT order (the take-profit leg) with a stopLoss leg');
    if (takeProfit) throw bad('takeProfit', 'An OCO order is itself the take-profit leg: give its limitPrice, and stopLoss');
    if (!stopLoss) throw bad('stopLoss', 'An OCO order needs stopLoss');
    const legs = [parseLeg(parent, 'STOP_LOSS', stopLoss, 'stopLoss', parent.side, false)];
    checkExitPrices(parent.side, parent.limitPrice!, legs[0]!.request.stopPrice!);
    return legs;
  },
  checkReplace: checkPairLegReplace,
};
