import { bad } from '../order-rules';
import type { OrderClassRules } from './legs';

/** SIMPLE: one order, no legs; replaced as an order of its own. */
export const simple: OrderClassRules = {
  legs(_parent, takeProfit, stopLoss) {
    for (const [name, value] of [
      ['takeProfit', takeProfit],
      ['stopLoss', stopLoss],
    ] as const)
      if (value !== undefined && value !== null) throw bad(name, `${name} needs orderClass BRACKET, OTO or OCO`);
    return [];
  },
  checkReplace() {
    // Any of its terms may change, as the order's type allows (replacementTerms).
  },
};
