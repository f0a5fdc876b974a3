import Decimal from 'decimal.js';
import type { OrderRow } from '../order-store';
import {
  bad,
  parseOrderRequest,
  prefixed,
  refused,
  type OrderClass,
  type OrderLeg,
  type OrderRequest,
  type OrderSide,
  type ReplaceRequest,
} from '../order-rules';

/**
 * What the order classes share: a leg read as an order of its own, a pair's exit prices, and
 * the rule for replacing a leg of a pair (a bracket's exits, an OCO's two legs).
 */

/** One child of a BRACKET, OCO or OTO order: an order of its own, and whether it waits for its parent to fill. */
export interface LegRequest {
  leg: OrderLeg;
  request: OrderRequest;
  /** Waits (PENDING) until the entry fills: BRACKET and OTO children; an OCO's legs work at once. */
  pending: boolean;
}

/** A leg's object as the request gives it (`takeProfit`, `stopLoss`). */
export type LegBody = Record<string, unknown>;

/**
 * An order class's own rules: the legs it asks for (from the request's `takeProfit` and
 * `stopLoss`, as given), and which of its orders a replace may take.
 */
export interface OrderClassRules {
  legs(parent: OrderRequest, takeProfit: unknown, stopLoss: unknown): LegRequest[];
  checkReplace(existing: OrderRow, request: ReplaceRequest): void;
}

/**
 * A group's entry, whose legs work after it: DAY or GTC (its legs take it too), never a
 * TRAILING_STOP; then its `takeProfit` and `stopLoss` objects, if given.
 */
export function groupLegBodies(
  orderClass: OrderClass,
  parent: OrderRequest,
  takeProfit: unknown,
  stopLoss: unknown,
): [LegBody | null, LegBody | null] {
  if (parent.timeInForce !== 'DAY' && parent.timeInForce !== 'GTC')
    throw refused('timeInForce', `A ${orderClass} order is DAY or GTC (its legs work after it)`);
  if (parent.type === 'TRAILING_STOP') throw refused('type', `A ${orderClass} order cannot be a TRAILING_STOP`);
  return [legBody(takeProfit, 'takeProfit'), legBody(stopLoss, 'stopLoss')];
}

/** The `takeProfit` or `stopLoss` object of a request, if given. */
function legBody(v: unknown, name: string): LegBody | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v)) throw bad(name, `${name} must be an object`);
  return v as LegBody;
}

/** A BRACKET's exits or an OTO's child, those given: the opposite side of the entry, waiting (PENDING) for it to fill. */
export function exitLegs(parent: OrderRequest, takeProfit: LegBody | null, stopLoss: LegBody | null): LegRequest[] {
  const opposite = parent.side === 'BUY' ? 'SELL' : 'BUY';
  const legs: LegRequest[] = [];
  if (takeProfit) legs.push(parseLeg(parent, 'TAKE_PROFIT', takeProfit, 'takeProfit', opposite, true));
  if (stopLoss) legs.push(parseLeg(parent, 'STOP_LOSS', stopLoss, 'stopLoss', opposite, true));
  return legs;
}

/** One leg as an order of its own: the parent's account, symbol, time in force and quantity; errors name `<name>.<field>`. */
export function parseLeg(parent: OrderRequest, leg: OrderLeg, body: LegBody, name: string, side: OrderSide, pending: boolean): LegRequest {
  for (const key of Object.keys(body))
    if (!(leg === 'TAKE_PROFIT' ? ['limitPrice'] : ['stopPrice', 'limitPrice']).includes(key))
      throw bad(`${name}.${key}`, `${name}.${key} is not a field of ${name}`);
  try {
    const request = parseOrderRequest({
      accountId: parent.accountId,
      symbol: parent.symbol,
      side,
      type: leg === 'TAKE_PROFIT' ? 'LIMIT' : body['limitPrice'] === undefined || body['limitPrice'] === null ? 'STOP' : 'STOP_LIMIT',
      timeInForce: parent.timeInForce,
      quantity: parent.quantity,
      limitPrice: body['limitPrice'],
      stopPrice: body['stopPrice'],
    });
    return { leg, request, pending };
  } catch (err) {
    throw prefixed(err, name);
  }
}

/** Exits that sell take profit above their stop; exits that buy, below it. */
export function checkExitPrices(side: OrderSide, takeProfit: string, stop: string): void {
  if (!exitPricesInOrder(side, takeProfit, stop))
    throw refused(
      'stopLoss.stopPrice',
      `stopLoss.stopPrice must be ${side === 'SELL' ? 'below' : 'above'} the take-profit limit ${takeProfit} (the legs ${side === 'SELL' ? 'sell' : 'buy'})`,
    );
}

const exitPricesInOrder = (side: OrderSide, takeProfit: string, stop: string) =>
  side === 'SELL' ? new Decimal(takeProfit).gt(stop) : new Decimal(takeProfit).lt(stop);

/**
 * A replaced leg against the pair's other leg, as placing checks the pair: a sell pair's
 * take-profit limit above its stop. The error names the replace's own field: `limitPrice` when
 * the take-profit is replaced, `stopPrice` when the stop leg is.
 */
export function checkReplacedLegPrices(side: OrderSide, replaced: OrderLeg, takeProfit: string, stop: string): void {
  if (exitPricesInOrder(side, takeProfit, stop)) return;
  const above = side === 'SELL';
  if (replaced === 'TAKE_PROFIT')
    throw refused(
      'limitPrice',
      `limitPrice must be ${above ? 'above' : 'below'} the stop-loss stop ${stop} (the legs ${side.toLowerCase()})`,
    );
  throw refused(
    'stopPrice',
    `stopPrice must be ${above ? 'below' : 'above'} the take-profit limit ${takeProfit} (the legs ${side.toLowerCase()})`,
  );
}

/**
 * Replacing a leg of a pair (an OCO's two legs, a bracket's exits): only a leg in its pair
 * (`oco_group_id`), at new prices. The legs trade one quantity between them (a partial fill
 * brings the other down to its remainder), and a leg keeps its group's time in force.
 */
export function checkPairLegReplace(existing: OrderRow, request: ReplaceRequest): void {
  const orderClass = existing.order_class;
  if (!existing.oco_group_id) throw refused('orderId', `A ${orderClass} order's legs cannot be replaced; cancel it and place a new one`);
  if (request.quantity !== null)
    throw refused(
      'quantity',
      `A ${orderClass} order's legs ${existing.side === 'BUY' ? 'buy' : 'sell'} one quantity together: replace their prices, or cancel it and place a new one`,
    );
  if (request.timeInForce && request.timeInForce !== existing.time_in_force)
    throw refused('timeInForce', `A ${orderClass} order's leg keeps the group's time in force (${existing.time_in_force})`);
}
