import Decimal from 'decimal.js';
import { AppError } from '@trading/errors';
import type { Instrument } from '../../instruments/entities/instrument.entity';
import { ceilToTick, type OrderRequest, type OrderSide, type ReplaceRequest } from '../order-rules';
import type { OrderRow } from '../order-store';

/**
 * TRAILING_STOP: a stop that trails the best price since it started working (its water mark) by
 * a distance or a percentage, its first stop from the current price.
 */

/**
 * A trailing stop's stop for a water mark: below the highest price for a sell (rounded down to
 * the tick), above the lowest for a buy (rounded up).
 */
export function trailingStop(
  side: OrderSide,
  mark: Decimal.Value,
  trail: { price?: string | null; percent?: string | null },
  tick: string,
): Decimal {
  const m = new Decimal(mark);
  const distance = trail.price ? new Decimal(trail.price) : m.times(trail.percent!).div(100);
  return side === 'SELL' ? floorToTick(m.minus(distance), tick) : ceilToTick(m.plus(distance), tick);
}

/** A trailing stop's first stop, from the current price (its first water mark); other orders as they are. */
export function withTrailingStop(request: OrderRequest, instrument: Instrument): OrderRequest {
  if (request.type !== 'TRAILING_STOP') return request;
  const stop = trailingStop(
    request.side,
    instrument.lastPrice,
    { price: request.trailPrice, percent: request.trailPercent },
    instrument.tickSize,
  );
  if (stop.lte(0))
    throw new AppError('UNPROCESSABLE', `The trail is wider than the price ${instrument.lastPrice}`, {
      field: request.trailPrice ? 'trailPrice' : 'trailPercent',
    });
  return { ...request, stopPrice: stop.toFixed() };
}

const floorToTick = (price: Decimal.Value, tick: string): Decimal =>
  new Decimal(price).div(tick).toDecimalPlaces(0, Decimal.ROUND_DOWN).times(tick);

const decimalOf = (value: string | null) => (value === null ? undefined : new Decimal(value).toFixed());

/** A trailing stop's trail on a replace: the one the request gives (the other then dropped), else the order's. */
export function trailOf(existing: OrderRow, request: ReplaceRequest): { trailPrice?: string; trailPercent?: string } {
  if (request.trailPrice) return { trailPrice: request.trailPrice };
  if (request.trailPercent) return { trailPercent: request.trailPercent };
  return { trailPrice: decimalOf(existing.trail_price), trailPercent: decimalOf(existing.trail_percent) };
}
