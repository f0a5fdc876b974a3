import type { ExchangeCalendar } from './exchange-calendar';

/**
 * XETRA (Deutsche Börse, Frankfurt) continuous trading. Closed on New Year's Day, Good Friday,
 * Easter Monday, Labour Day (1 May), Christmas Eve, Christmas Day, Boxing Day and New Year's Eve;
 * those falling on a weekend are not listed. No early closes.
 *
 * To add a year: copy its trading holidays from Deutsche Börse's XETRA trading calendar, then
 * raise `lastYear` (and the coverage test in trading-hours.spec.ts).
 */
export const XETRA: ExchangeCalendar = {
  name: 'XETRA',
  description: 'XETRA (Deutsche Börse), 09:00-17:30 Europe/Berlin',
  timeZone: 'Europe/Berlin',
  open: '09:00',
  close: '17:30',
  firstYear: 2026,
  lastYear: 2028,
  holidays: {
    '2026-01-01': "New Year's Day",
    '2026-04-03': 'Good Friday',
    '2026-04-06': 'Easter Monday',
    '2026-05-01': 'Labour Day',
    '2026-12-24': 'Christmas Eve',
    '2026-12-25': 'Christmas Day',
    // Boxing Day is a Saturday.
    '2026-12-31': "New Year's Eve",

    '2027-01-01': "New Year's Day",
    '2027-03-26': 'Good Friday',
    '2027-03-29': 'Easter Monday',
    // Labour Day is a Saturday; Christmas Day and Boxing Day fall on the weekend.
    '2027-12-24': 'Christmas Eve',
    '2027-12-31': "New Year's Eve",

    // New Year's Day is a Saturday; Christmas Eve and New Year's Eve are Sundays.
    '2028-04-14': 'Good Friday',
    '2028-04-17': 'Easter Monday',
    '2028-05-01': 'Labour Day',
    '2028-12-25': 'Christmas Day',
    '2028-12-26': 'Boxing Day',
  },
  earlyCloses: {},
};
