import { ORDER_CLASSES, oneOf, type OrderClass, type OrderRequest, type ReplaceRequest } from '../order-rules';
import type { OrderRow } from '../order-store';
import { bracket } from './bracket';
import type { LegRequest, OrderClassRules } from './legs';
import { oco } from './oco';
import { oto } from './oto';
import { simple } from './simple';

/** Each order class's own rules: its legs, and which of its orders a replace may take. */
const RULES: Readonly<Record<OrderClass, OrderClassRules>> = { SIMPLE: simple, BRACKET: bracket, OCO: oco, OTO: oto };

/**
 * The children an order's class asks for, each an OrderRequest of its own (fields named
 * `takeProfit.limitPrice`, `stopLoss.stopPrice` …). BRACKET: takeProfit and stopLoss, the
 * opposite side of the entry, same quantity, working once the entry fills and cancelling each
 * other. OTO: one of them. OCO: the order itself is the LIMIT leg; stopLoss the other leg, same
 * side and quantity, both working at once. An entry's time in force is DAY or GTC (its children
 * take it too). No orderClass: SIMPLE.
 */
export function parseLegs(input: Record<string, unknown>, parent: OrderRequest): { orderClass: OrderClass; legs: LegRequest[] } {
  const given = input['orderClass'] !== undefined && input['orderClass'] !== null;
  const orderClass = given ? oneOf(input['orderClass'], ORDER_CLASSES, 'orderClass') : 'SIMPLE';
  return { orderClass, legs: RULES[orderClass].legs(parent, input['takeProfit'], input['stopLoss']) };
}

/**
 * Which orders a replace may take, by their class. A SIMPLE order, and an OTO's child once it
 * works, are replaced as orders of their own. A pair's leg (an OCO's two legs, a bracket's exits
 * once its entry has filled) keeps its place in the pair, at new prices only: no new quantity
 * and no new time in force (it keeps its group's). A bracket's or an OTO's entry is refused.
 */
export function checkReplaceableClass(existing: OrderRow, request: ReplaceRequest): void {
  RULES[existing.order_class].checkReplace(existing, request);
}
