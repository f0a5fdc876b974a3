import Decimal from 'decimal.js';
import { AppError } from '@trading/errors';
import type { OrderDesk } from './order-desk';
import { symbolFilter } from './order-lookup';
import { ORDER_CLASSES, ORDER_TYPES, SHORT_SELLING_ALLOWED, TIME_IN_FORCE_BY_TYPE, TIMES_IN_FORCE } from './order-rules';

/**
 * What an account may place, for an app to build its order ticket from: order types, classes and
 * times in force, the commission, the price band, the open-order cap, whether the market is open,
 * and each instrument's lot, tick and quantity limits (one symbol's, or all).
 */
export async function tradingTerms(desk: OrderDesk, accountId: string, symbol: unknown) {
  symbolFilter(symbol);
  let instruments = await desk.instruments.list();
  if (symbol) {
    instruments = instruments.filter((i) => i.symbol === symbol);
    if (!instruments.length) throw new AppError('NOT_FOUND', `Unknown symbol ${symbol as string}`, { field: 'symbol' });
  }
  const { options, hours } = desk;
  return {
    accountId,
    orderTypes: [...ORDER_TYPES],
    orderClasses: [...ORDER_CLASSES],
    timesInForce: [...TIMES_IN_FORCE],
    timeInForceByType: ORDER_TYPES.map((type) => ({ type, timesInForce: [...TIME_IN_FORCE_BY_TYPE[type]] })),
    shortSellingAllowed: SHORT_SELLING_ALLOWED,
    marketOpen: hours.isOpen(),
    tradingHours: hours.description,
    commissionRate: options.commissionRate,
    minimumCommission: options.minimumCommission,
    priceBand: options.priceBand,
    maxOpenOrders: options.maxOpenOrdersPerAccount,
    marketOrderCollar: options.collar,
    instruments: instruments.map((i) => ({
      symbol: i.symbol,
      name: i.name,
      currency: i.currency,
      tickSize: i.tickSize,
      lotSize: i.lotSize,
      minQuantity: i.minQuantity!,
      maxQuantity: i.maxQuantity!,
      fractional: !new Decimal(i.lotSize).isInteger(),
      tradable: i.tradable,
      lastPrice: i.lastPrice,
    })),
  };
}
