import Decimal from 'decimal.js';
import { AppError } from '@trading/errors';
import { ceilMoney } from '@trading/money';
import type { Instrument } from '../instruments/entities/instrument.entity';
import { bidAsk } from '../market-data/quote';
import { commissionOn, type CommissionSchedule } from './money';
import { ceilToTick, type OrderRequest } from './order-rules';

/** What an order would reserve and cost, from the instrument's current price. */
export interface Reservation {
  referencePrice: Decimal;
  /** Highest price a buy may pay (market and stop buys): the ask (at the stop, for stops) × (1 + collar). */
  collarPrice: Decimal | null;
  /** The value the hold covers: quantity × (limit | collar). */
  maxValue: Decimal;
  holdAmount: Decimal;
  estimatedPrice: Decimal;
}

/** What a reservation is reckoned with: the market orders' collar, the quoted spread, the largest order and the commission. */
export interface ReservationTerms {
  collar: string;
  spread: string;
  maxOrderValue: string;
  schedule: CommissionSchedule;
}

/** A buy's hold for an order that can trade up to `maxValue`: that value in whole minor units, rounded up, and its commission. */
export function holdOn(maxValue: Decimal, schedule: CommissionSchedule, currency: string): Decimal {
  return ceilMoney(maxValue, currency).plus(commissionOn(maxValue, schedule, currency));
}

/** What the order reserves (a buy's hold) and is expected to cost; an order worth more than one order may be is refused. */
export function reserve(request: OrderRequest, instrument: Instrument, terms: ReservationTerms): Reservation {
  const last = new Decimal(instrument.lastPrice);
  const quantity = new Decimal(request.quantity);
  const limit = request.limitPrice ? new Decimal(request.limitPrice) : null;
  const stop = request.stopPrice ? new Decimal(request.stopPrice) : null;
  const buy = request.side === 'BUY';
  // The quote the order meets: now, or (a stop) once the last price has come to its stop. Buys
  // fill at the ask, so a market or stop buy's collar, and with it its hold, covers a fill there.
  const quote = bidAsk(stop ?? last, instrument.tickSize, terms.spread);
  const collarPrice = buy && !limit ? ceilToTick(quote.ask.times(new Decimal(1).plus(terms.collar)), instrument.tickSize) : null;
  const maxValue = quantity.times(limit ?? collarPrice ?? last);
  // What is stored (numeric(20, 8)) and what one order may be worth: refused before anything is written.
  if (maxValue.gt(terms.maxOrderValue)) {
    throw new AppError(
      'UNPROCESSABLE',
      `The order is worth up to ${maxValue.toDecimalPlaces(2).toString()} ${instrument.currency}; one order may be worth at most ${terms.maxOrderValue}`,
      { field: 'quantity' },
    );
  }
  const holdAmount = holdOn(maxValue, terms.schedule, instrument.currency);
  // A market order fills at the quote (a buy at the ask, a sell at the bid), a marketable limit
  // too; a resting limit at its limit at worst; a stop at about the quote at its stop.
  const atQuote = buy ? quote.ask : quote.bid;
  const estimatedPrice = limit ? (buy ? Decimal.min(limit, stop ? limit : atQuote) : Decimal.max(limit, stop ? limit : atQuote)) : atQuote;
  return { referencePrice: last, collarPrice, maxValue, holdAmount, estimatedPrice };
}
