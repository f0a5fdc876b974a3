import type { ExchangeCalendar } from './exchange-calendar';
import { US } from './us';
import { XETRA } from './xetra';

export type { ExchangeCalendar } from './exchange-calendar';
export { zonedInstant, zonedDay } from './zoned-time';

/** The exchange calendars OMS_TRADING_HOURS can name. */
export const EXCHANGE_CALENDARS: Readonly<Record<string, ExchangeCalendar>> = { US, XETRA };
