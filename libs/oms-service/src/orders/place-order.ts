import { randomUUID } from 'node:crypto';
import { assertReachesAccount, idempotencyOwner, parseIdempotencyKey, type Claims } from '@trading/auth';
import { requestHash } from '@trading/db';
import type { Instrument } from '../instruments/entities/instrument.entity';
import { answerOrder, checkCanTrade, earlierOrder, ownedAccount, type OrderDesk } from './order-desk';
import { checkLeg, confirmGroup, type CheckedLeg } from './order-legs';
import type { LegRequest } from './classes/legs';
import { parseLegs } from './classes/order-classes';
import { withTrailingStop } from './classes/trailing-stop';
import { checkInstrumentRules, checkPriceBand, parseOrderRequest, type OrderClass, type OrderRequest } from './order-rules';
import type { OrderRow, OrderView } from './order-store';
import { confirmHold, recordPlacement, type Placement } from './placing';
import { reserve } from './reservation';

/**
 * Placing an order, as a pipeline: parse the request, check it against the instrument's rules,
 * reserve (what it may cost or sell), record it (ACCEPTED, under its Idempotency-Key), hold its
 * cash in banking, and schedule it (NEW, the engine woken for an order that must act at once).
 * Each step hands a typed value to the next. A REJECTED order is answered 422.
 */
export async function placeOrder(
  desk: OrderDesk,
  claims: Claims,
  input: Record<string, unknown>,
  idempotencyKey: unknown,
  requestId?: string,
): Promise<OrderView> {
  const request = parseOrderRequest(input);
  const group = parseLegs(input, request);
  const key = parseIdempotencyKey(idempotencyKey);
  // A SIMPLE order hashes as it always has, so keys given before order classes still answer.
  const hash = requestHash('placeOrder', group.orderClass === 'SIMPLE' ? request : { ...request, ...group });
  return answerOrder(await submitOrder(desk, claims, request, { key, hash }, requestId, group));
}

/** An order's group: its class and its legs (none for a SIMPLE order). */
export interface OrderGroup {
  orderClass: OrderClass;
  legs: LegRequest[];
}

/** The Idempotency-Key an order is placed under, with the hash of the request the caller made (for a close, not the order it derives). */
export interface KeyedRequest {
  key: string | null | undefined;
  hash: string;
}

/** An order checked against its instrument's rules, its legs each checked and reserved. */
interface CheckedOrder {
  request: OrderRequest;
  instrument: Instrument;
  legs: CheckedLeg[];
}

/** Rules: the instrument's (lot, tick, quantity limits, tradable), a trailing stop's first stop, the price band, each leg's. */
async function checkOrder(desk: OrderDesk, placed: OrderRequest, group: OrderGroup): Promise<CheckedOrder> {
  const instrument = checkInstrumentRules(placed, await desk.instruments.find(placed.symbol));
  const request = withTrailingStop(placed, instrument);
  checkPriceBand(request, instrument, desk.options.priceBand);
  const legs = group.legs.map((leg) => ({ ...leg, reservation: checkLeg(leg, instrument, desk.options.priceBand, desk.terms) }));
  return { request, instrument, legs };
}

/**
 * Places a parsed order: the order's row as it is now, REJECTED included (callers answer it).
 * Closing a position places its sell through here too.
 */
export async function submitOrder(
  desk: OrderDesk,
  claims: Claims,
  placed: OrderRequest,
  { key, hash }: KeyedRequest,
  requestId?: string,
  group: OrderGroup = { orderClass: 'SIMPLE', legs: [] },
): Promise<OrderRow> {
  const keyOwner = idempotencyOwner(claims);
  // An account the token was not given is refused before the order is looked at at all.
  assertReachesAccount(claims, placed.accountId);
  const { request, instrument, legs } = await checkOrder(desk, placed, group);
  const account = checkCanTrade(
    await ownedAccount(desk, request.accountId, claims, requestId, request.side === 'SELL' ? request.symbol : undefined),
  );
  const buy = request.side === 'BUY';
  // A plain buy writes one row (its hold comes next, in banking), with its key's claim: one
  // statement, its own transaction, without the round trips of BEGIN and COMMIT. Anything more
  // (a sell, legs, or a key that exists) is the transaction below.
  const oneRow = buy && !legs.length;
  if (key && !oneRow) {
    const earlier = await earlierOrder(desk, keyOwner, key, hash);
    if (earlier) return earlier;
  }
  const placement: Placement = {
    userId: claims.sub,
    clientOrderId: request.clientOrderId ?? randomUUID(),
    request,
    instrument,
    account,
    reservation: reserve(request, instrument, desk.terms),
    expiresAt: request.timeInForce === 'DAY' ? desk.hours.sessionEnd() : null,
    orderClass: group.orderClass,
    legs,
    claim: key ? { owner: keyOwner, key, hash } : undefined,
  };
  const recorded = await recordOrder(desk, placement, oneRow);
  if ('replay' in recorded) return (await earlierOrder(desk, keyOwner, key!, hash))!;
  return schedule(desk, await holdCash(desk, recorded, claims.sub, legs.length > 0, buy));
}

/** Record: a plain buy's one statement (undefined when the transaction must decide), else the placement's transaction. */
async function recordOrder(desk: OrderDesk, p: Placement, oneRow: boolean): Promise<OrderRow | { replay: string }> {
  if (oneRow) {
    const row = { reservation: p.reservation, status: 'ACCEPTED' as const, expiresAt: p.expiresAt, orderClass: p.orderClass };
    const first = await desk.inserts.first(p.userId, p.clientOrderId, p.request, p.instrument, row, p.claim);
    if (first) return first;
  }
  return desk.dataSource.transaction((tx) => recordPlacement(tx, desk.inserts, p));
}

/** Hold: a recorded order's holds in banking (a group's, or a buy's), then working; one that is not ACCEPTED is as it is. */
async function holdCash(desk: OrderDesk, recorded: OrderRow, userId: string, withLegs: boolean, buy: boolean): Promise<OrderRow> {
  if (recorded.status !== 'ACCEPTED') return recorded;
  if (withLegs) return confirmGroup(desk.dataSource, desk.banking, recorded, userId);
  if (buy) return confirmHold(desk.dataSource, desk.banking, recorded, userId);
  return recorded;
}

/** Schedule: an order that must act at once (market, IOC, FOK) and now works wakes the engine, not waiting for its next pass. */
function schedule(desk: OrderDesk, order: OrderRow): OrderRow {
  if (order.status === 'NEW' && (order.type === 'MARKET' || order.time_in_force === 'IOC' || order.time_in_force === 'FOK'))
    desk.options.actNow?.();
  return order;
}
