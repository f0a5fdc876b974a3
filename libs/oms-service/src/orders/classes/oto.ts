import { bad, refused } from '../order-rules';
import { exitLegs, groupLegBodies, type OrderClassRules } from './legs';

/**
 * OTO: an entry and one child (`takeProfit` or `stopLoss`) on the opposite side at the same
 * quantity, that waits (PENDING) for the entry to fill. The entry is not replaced; the child,
 * once it works, is replaced as an order of its own, keeping its class and parent.
 */
export const oto: OrderClassRules = {
  legs(parent, takeProfitGiven, stopLossGiven) {
    const [takeProfit, stopLoss] = groupLegBodies('OTO', parent, takeProfitGiven, stopLossGiven);
    if (!takeProfit === !stopLoss) throw bad(takeProfit ? 'stopLoss' : 'takeProfit', 'An OTO order has one child: takeProfit or stopLoss');
    return exitLegs(parent, takeProfit, stopLoss);
  },
  checkReplace(existing) {
    if (!existing.parent_order_id)
      throw refused('orderId', "An OTO order's entry cannot be replaced (its child can, once it works); cancel it and place a new one");
  },
};
