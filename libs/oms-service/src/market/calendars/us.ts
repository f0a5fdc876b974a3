import type { ExchangeCalendar } from './exchange-calendar';

/**
 * NYSE and Nasdaq regular trading hours. A holiday on a Saturday closes the Friday before and one
 * on a Sunday the Monday after, except that New Year's Day on a Saturday closes nothing (the
 * Friday ends the accounting year). Early closes at 13:00 on the day after Thanksgiving, and on
 * Christmas Eve and July 3 when those are trading days.
 *
 * To add a year: copy its holidays and early closes from the NYSE holiday page, then raise
 * `lastYear` (and the coverage test in trading-hours.spec.ts).
 */
export const US: ExchangeCalendar = {
  name: 'US',
  description: 'US equities (NYSE/Nasdaq), 09:30-16:00 America/New_York',
  timeZone: 'America/New_York',
  open: '09:30',
  close: '16:00',
  firstYear: 2026,
  lastYear: 2028,
  holidays: {
    '2026-01-01': "New Year's Day",
    '2026-01-19': 'Martin Luther King Jr. Day',
    '2026-02-16': "Washington's Birthday (Presidents' Day)",
    '2026-04-03': 'Good Friday',
    '2026-05-25': 'Memorial Day',
    '2026-06-19': 'Juneteenth',
    '2026-07-03': 'Independence Day (observed; July 4 is a Saturday)',
    '2026-09-07': 'Labor Day',
    '2026-11-26': 'Thanksgiving Day',
    '2026-12-25': 'Christmas Day',

    '2027-01-01': "New Year's Day",
    '2027-01-18': 'Martin Luther King Jr. Day',
    '2027-02-15': "Washington's Birthday (Presidents' Day)",
    '2027-03-26': 'Good Friday',
    '2027-05-31': 'Memorial Day',
    '2027-06-18': 'Juneteenth (observed; June 19 is a Saturday)',
    '2027-07-05': 'Independence Day (observed; July 4 is a Sunday)',
    '2027-09-06': 'Labor Day',
    '2027-11-25': 'Thanksgiving Day',
    '2027-12-24': 'Christmas Day (observed; December 25 is a Saturday)',

    // New Year's Day 2028 is a Saturday: not observed, 2027-12-31 trades.
    '2028-01-17': 'Martin Luther King Jr. Day',
    '2028-02-21': "Washington's Birthday (Presidents' Day)",
    '2028-04-14': 'Good Friday',
    '2028-05-29': 'Memorial Day',
    '2028-06-19': 'Juneteenth',
    '2028-07-04': 'Independence Day',
    '2028-09-04': 'Labor Day',
    '2028-11-23': 'Thanksgiving Day',
    '2028-12-25': 'Christmas Day',
  },
  earlyCloses: {
    // 2026-07-03 is the Independence Day holiday itself.
    '2026-11-27': { close: '13:00', reason: 'Day after Thanksgiving' },
    '2026-12-24': { close: '13:00', reason: 'Christmas Eve' },

    // July 3 is a Saturday and Christmas Eve the observed Christmas holiday.
    '2027-11-26': { close: '13:00', reason: 'Day after Thanksgiving' },

    // Christmas Eve is a Sunday.
    '2028-07-03': { close: '13:00', reason: 'Day before Independence Day' },
    '2028-11-24': { close: '13:00', reason: 'Day after Thanksgiving' },
  },
};
