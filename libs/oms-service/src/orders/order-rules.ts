import Decimal from 'decimal.js';
import { AppError, parseUuid } from '@trading/errors';
import type { Instrument } from '../instruments/entities/instrument.entity';

const ORDER_SIDES = ['BUY', 'SELL'] as const;
export const ORDER_TYPES = ['MARKET', 'LIMIT', 'STOP', 'STOP_LIMIT', 'TRAILING_STOP'] as const;
export const TIMES_IN_FORCE = ['DAY', 'GTC', 'IOC', 'FOK'] as const;
/** SIMPLE: one order. BRACKET: an entry whose take-profit and stop-loss start when it fills and cancel each other. OCO: a limit and a stop that cancel each other. OTO: an entry and one child that starts when it fills. Each class's rules and legs live in classes/. */
export const ORDER_CLASSES = ['SIMPLE', 'BRACKET', 'OCO', 'OTO'] as const;
export type OrderClass = (typeof ORDER_CLASSES)[number];
export type OrderLeg = 'TAKE_PROFIT' | 'STOP_LOSS';
export type OrderSide = (typeof ORDER_SIDES)[number];
export type OrderType = (typeof ORDER_TYPES)[number];
export type TimeInForce = (typeof TIMES_IN_FORCE)[number];

/**
 * Which times in force each order type takes. A market order must not rest for days (no GTC);
 * a stop waits for its trigger by nature, so immediate-or-cancel and fill-or-kill make no sense.
 */
export const TIME_IN_FORCE_BY_TYPE: Readonly<Record<OrderType, readonly TimeInForce[]>> = {
  MARKET: ['DAY', 'IOC', 'FOK'],
  LIMIT: ['DAY', 'GTC', 'IOC', 'FOK'],
  STOP: ['DAY', 'GTC'],
  STOP_LIMIT: ['DAY', 'GTC'],
  TRAILING_STOP: ['DAY', 'GTC'],
};

/** Cash accounts cannot sell what they do not hold; this paper market allows no shorts at all yet. */
// Stryker disable next-line BooleanLiteral: the sell check that reads it is placing's, pinned end to end by orders-rules.spec
export const SHORT_SELLING_ALLOWED = false;

export interface OrderRequest {
  accountId: string;
  symbol: string;
  side: OrderSide;
  type: OrderType;
  timeInForce: TimeInForce;
  quantity: string;
  limitPrice: string | null;
  stopPrice: string | null;
  clientOrderId: string | null;
  /** TRAILING_STOP: the stop trails the best price by this distance, or by this percentage (exactly one). */
  trailPrice?: string;
  trailPercent?: string;
}

const SYMBOL = /^[A-Z0-9.]{1,12}$/;
const DECIMAL = /^\d{1,12}(\.\d{1,8})?$/;
const CLIENT_ORDER_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** A request that is malformed (a missing, unknown or badly formed field), naming the field. */
export const bad = (field: string, message: string) => new AppError('BAD_USER_INPUT', message, { field });
/** A well-formed request a rule refuses, naming the field. */
export const refused = (field: string, message: string) => new AppError('UNPROCESSABLE', message, { field });

export { parseUuid };

/** One of `values`, else refused naming `field`. */
export function oneOf<T extends string>(value: unknown, values: readonly T[], field: string): T {
  if (!(values as readonly unknown[]).includes(value)) throw bad(field, `${field} must be one of ${values.join(', ')}`);
  return value as T;
}

function positiveDecimal(value: unknown, field: string): string {
  if (typeof value !== 'string' || !DECIMAL.test(value))
    throw bad(field, `${field} must be a decimal string such as "10" or "189.25" (at most 8 decimals)`);
  const d = new Decimal(value);
  if (d.lte(0)) throw bad(field, `${field} must be greater than zero`);
  return d.toFixed();
}

/** The shape of an order (types and formats); each failure names its field. */
export function parseOrderRequest(input: Record<string, unknown>): OrderRequest {
  const type = oneOf(input['type'], ORDER_TYPES, 'type');
  const given = (name: string) => input[name] !== undefined && input[name] !== null;
  checkTrailGiven(type, given);
  const symbol = parseSymbol(input['symbol']);
  const clientOrderId = optionalClientOrderId(input['clientOrderId']);
  const request: OrderRequest = {
    accountId: parseUuid(input['accountId'], 'accountId'),
    symbol,
    side: oneOf(input['side'], ORDER_SIDES, 'side'),
    type,
    timeInForce: oneOf(input['timeInForce'], TIMES_IN_FORCE, 'timeInForce'),
    quantity: positiveDecimal(input['quantity'], 'quantity'),
    limitPrice: priceFor(type, input, 'limitPrice', type === 'LIMIT' || type === 'STOP_LIMIT'),
    stopPrice: priceFor(type, input, 'stopPrice', type === 'STOP' || type === 'STOP_LIMIT'),
    clientOrderId,
  };
  if (type === 'TRAILING_STOP') {
    if (given('trailPrice')) request.trailPrice = positiveDecimal(input['trailPrice'], 'trailPrice');
    else request.trailPercent = positiveDecimal(input['trailPercent'], 'trailPercent');
    if (request.trailPercent && new Decimal(request.trailPercent).gte(100)) throw bad('trailPercent', 'trailPercent must be below 100');
  }
  checkTimeInForce(type, request.timeInForce);
  return request;
}

/** A trail only on a TRAILING_STOP, and there exactly one of trailPrice and trailPercent. */
function checkTrailGiven(type: OrderType, given: (name: string) => boolean): void {
  const trailing = type === 'TRAILING_STOP';
  for (const name of ['trailPrice', 'trailPercent'])
    if (!trailing && given(name)) throw bad(name, `${name} is only for TRAILING_STOP orders`);
  if (trailing && given('trailPrice') === given('trailPercent'))
    throw bad(given('trailPrice') ? 'trailPercent' : 'trailPrice', 'TRAILING_STOP orders take exactly one of trailPrice and trailPercent');
}

/** A limit or stop price: required where the order type `needed` it, refused where it does not. */
function priceFor(type: OrderType, input: Record<string, unknown>, name: 'limitPrice' | 'stopPrice', needed: boolean): string | null {
  const v = input[name];
  if (v === undefined || v === null) {
    if (needed) throw bad(name, `${name} is required for ${type} orders`);
    return null;
  }
  if (!needed) throw bad(name, `${name} is not allowed for ${type} orders`);
  return positiveDecimal(v, name);
}

function parseSymbol(symbol: unknown): string {
  if (typeof symbol !== 'string' || !SYMBOL.test(symbol))
    throw bad('symbol', 'symbol must be an instrument symbol: 1 to 12 upper-case letters, digits or dots');
  return symbol;
}

/** The client's own id for the order, if it gave one. */
function optionalClientOrderId(clientOrderId: unknown): string | null {
  if (clientOrderId === undefined || clientOrderId === null) return null;
  if (typeof clientOrderId !== 'string' || !CLIENT_ORDER_ID.test(clientOrderId))
    throw bad('clientOrderId', 'clientOrderId must be 1 to 64 characters of A-Z a-z 0-9 . _ : -');
  return clientOrderId;
}

function checkTimeInForce(type: OrderType, timeInForce: TimeInForce): void {
  if (!TIME_IN_FORCE_BY_TYPE[type].includes(timeInForce)) {
    throw refused(
      'timeInForce',
      `timeInForce ${timeInForce} is not allowed for ${type} orders (allowed: ${TIME_IN_FORCE_BY_TYPE[type].join(', ')})`,
    );
  }
}

/** An AppError about a child's field, named as the request spells it (`stopLoss.stopPrice`). */
export function prefixed(err: unknown, name: string): unknown {
  if (!(err instanceof AppError) || !err.field || err.field.includes('.')) return err;
  return new AppError(err.code, `${name}.${err.message}`, { ...err.options, field: `${name}.${err.field}` });
}

/** Closing a position: all of it, a quantity, or a percentage of it (not both). */
export interface CloseRequest {
  accountId: string;
  symbol: string;
  quantity: string | null;
  percentage: string | null;
}

export function parseCloseRequest(input: Record<string, unknown>): CloseRequest {
  const symbol = input['symbol'];
  if (typeof symbol !== 'string' || !SYMBOL.test(symbol))
    throw bad('symbol', 'symbol must be an instrument symbol: 1 to 12 upper-case letters, digits or dots');
  const given = (name: string) => input[name] !== undefined && input[name] !== null;
  if (given('quantity') && given('percentage')) throw bad('percentage', 'Give quantity or percentage, not both');
  const percentage = given('percentage') ? positiveDecimal(input['percentage'], 'percentage') : null;
  if (percentage && new Decimal(percentage).gt(100)) throw bad('percentage', 'percentage must be at most 100');
  return {
    accountId: parseUuid(input['accountId'], 'accountId'),
    symbol,
    quantity: given('quantity') ? positiveDecimal(input['quantity'], 'quantity') : null,
    percentage,
  };
}

/** A replace: the order, and what changes (quantity is the new total, fills included). */
export interface ReplaceRequest {
  accountId: string;
  orderId: string;
  quantity: string | null;
  limitPrice: string | null;
  stopPrice: string | null;
  timeInForce: TimeInForce | null;
  /** A TRAILING_STOP's new trail: one of the two, or neither (the trail stays). */
  trailPrice: string | null;
  trailPercent: string | null;
  /** The replacement's own clientOrderId; null: a fresh one. */
  clientOrderId: string | null;
}

export function parseReplaceRequest(input: Record<string, unknown>): ReplaceRequest {
  const given = (name: string) => input[name] !== undefined && input[name] !== null;
  const decimal = (name: string) => (given(name) ? positiveDecimal(input[name], name) : null);
  if (given('trailPrice') && given('trailPercent')) throw bad('trailPercent', 'Give trailPrice or trailPercent, not both');
  const request: ReplaceRequest = {
    accountId: parseUuid(input['accountId'], 'accountId'),
    orderId: parseUuid(input['orderId'], 'orderId'),
    quantity: decimal('quantity'),
    limitPrice: decimal('limitPrice'),
    stopPrice: decimal('stopPrice'),
    timeInForce: given('timeInForce') ? oneOf(input['timeInForce'], TIMES_IN_FORCE, 'timeInForce') : null,
    trailPrice: decimal('trailPrice'),
    trailPercent: decimal('trailPercent'),
    clientOrderId: optionalClientOrderId(input['clientOrderId']),
  };
  if (request.trailPercent && new Decimal(request.trailPercent).gte(100)) throw bad('trailPercent', 'trailPercent must be below 100');
  const changes = [request.quantity, request.limitPrice, request.stopPrice, request.timeInForce, request.trailPrice, request.trailPercent];
  if (changes.every((change) => change === null))
    throw refused('body', 'Nothing to change: give quantity, limitPrice, stopPrice, timeInForce, trailPrice or trailPercent');
  return request;
}

const isMultiple = (value: string, step: string) => new Decimal(value).mod(step).isZero();

/** The instrument's rules: tradable, quantity in lots within the limits, prices on the tick. */
export function checkInstrumentRules(request: OrderRequest, instrument: Instrument | null): Instrument {
  if (!instrument) throw refused('symbol', `Unknown symbol ${request.symbol}`);
  if (!instrument.tradable) throw refused('symbol', `${request.symbol} is halted: it takes no new orders until trading resumes`);
  const { quantity } = request;
  if (!isMultiple(quantity, instrument.lotSize)) {
    throw refused(
      'quantity',
      `quantity must be a whole multiple of the lot size ${instrument.lotSize}${new Decimal(instrument.lotSize).isInteger() ? ' (no fractional quantities)' : ''}`,
    );
  }
  if (new Decimal(quantity).lt(instrument.minQuantity!)) throw refused('quantity', `quantity must be at least ${instrument.minQuantity}`);
  if (new Decimal(quantity).gt(instrument.maxQuantity!)) throw refused('quantity', `quantity must be at most ${instrument.maxQuantity}`);
  if (request.trailPrice && !isMultiple(request.trailPrice, instrument.tickSize))
    throw refused('trailPrice', `trailPrice must be a multiple of the tick size ${instrument.tickSize}`);
  for (const name of ['limitPrice', 'stopPrice'] as const) {
    const price = request[name];
    if (price !== null && !isMultiple(price, instrument.tickSize))
      throw refused(name, `${name} must be a multiple of the tick size ${instrument.tickSize}`);
  }
  return instrument;
}

/**
 * Limit and stop prices within `band` (a fraction, e.g. 0.5 = ±50 %) of the last price: a
 * $0.01 bid on a $190 share can never fill and only sits on the book (and on the engine).
 */
export function checkPriceBand(request: OrderRequest, instrument: Instrument, band: string): void {
  const last = new Decimal(instrument.lastPrice);
  const low = last.times(new Decimal(1).minus(band));
  const high = last.times(new Decimal(1).plus(band));
  for (const name of ['limitPrice', 'stopPrice'] as const) {
    const price = request[name];
    if (price !== null && (new Decimal(price).lt(low) || new Decimal(price).gt(high))) {
      throw refused(
        name,
        `${name} must be within ${new Decimal(band).times(100).toString()}% of the last price ${last.toString()} (${low.toDecimalPlaces(4).toString()} to ${high.toDecimalPlaces(4).toString()})`,
      );
    }
  }
}

/** Rounds a price up to the instrument's tick. */
export const ceilToTick = (price: Decimal.Value, tick: string): Decimal =>
  new Decimal(price).div(tick).toDecimalPlaces(0, Decimal.ROUND_UP).times(tick);
export const floorToLot = (quantity: Decimal.Value, lot: string): Decimal =>
  new Decimal(quantity).div(lot).toDecimalPlaces(0, Decimal.ROUND_DOWN).times(lot);
