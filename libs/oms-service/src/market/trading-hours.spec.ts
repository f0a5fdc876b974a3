import { loadOmsConfig, tradingHoursSetting } from '../config';
import { EXCHANGE_CALENDARS } from './calendars';
import { TradingHours, tradingHoursProblem } from './trading-hours';

const at = (iso: string) => new Date(iso);

describe('the market clock (OMS_TRADING_HOURS)', () => {
  it('always open: open from now on, the day closing at the coming UTC midnight', () => {
    const now = at('2026-03-02T22:37:21.000Z');
    expect(new TradingHours('always').clock(now)).toEqual({ isOpen: true, nextOpen: now, nextClose: at('2026-03-03T00:00:00.000Z') });
  });

  it('a day session: closed, it opens before it closes; open, it next opens for the following session', () => {
    const hours = new TradingHours('14:30-21:00');
    expect(hours.clock(at('2026-03-02T10:00:00Z'))).toEqual({
      isOpen: false,
      nextOpen: at('2026-03-02T14:30:00Z'),
      nextClose: at('2026-03-02T21:00:00Z'),
    });
    expect(hours.clock(at('2026-03-02T15:00:00Z'))).toEqual({
      isOpen: true,
      nextOpen: at('2026-03-03T14:30:00Z'),
      nextClose: at('2026-03-02T21:00:00Z'),
    });
  });

  it('a session past midnight is open across it and closes the next morning', () => {
    const hours = new TradingHours('22:00-06:00');
    expect(hours.clock(at('2026-03-02T23:00:00Z'))).toEqual({
      isOpen: true,
      nextOpen: at('2026-03-03T22:00:00Z'),
      nextClose: at('2026-03-03T06:00:00Z'),
    });
    expect(hours.clock(at('2026-03-03T12:00:00Z')).isOpen).toBe(false);
    expect(hours.sessions(at('2026-03-02T00:00:00Z'), at('2026-03-02T00:00:00Z'))).toEqual([
      { open: at('2026-03-02T22:00:00Z'), close: at('2026-03-03T06:00:00Z') },
    ]);
  });

  it('refuses a session that is not on the clock or never closes, naming the setting', () => {
    for (const spec of ['25:00-26:00', '09:75-17:00', '09:00-09:00', '9-17'])
      expect(() => loadOmsConfig({ OMS_TRADING_HOURS: spec, OMS_DATABASE_URL: 'postgres://x@localhost/oms' })).toThrow(/OMS_TRADING_HOURS/);
  });

  it('takes the exchange calendars by name and refuses other words, listing them', () => {
    for (const spec of ['US', 'XETRA']) expect(tradingHoursSetting.parse(spec)).toBe(spec);
    expect(() => new TradingHours('NYSE')).toThrow('OMS_TRADING_HOURS must be "always", an exchange calendar ("US", "XETRA")');
  });
});

describe('exchange calendars (OMS_TRADING_HOURS=US, XETRA)', () => {
  const us = new TradingHours('US');
  const xetra = new TradingHours('XETRA');
  const hours = { US: us, XETRA: xetra };
  const iso = (d: Date) => d.toISOString();
  const session = (s: { open: Date; close: Date }) => `${iso(s.open)} ${iso(s.close)}`;

  it.each([
    ['US', '2026-07-03T15:00:00Z', false, 'Independence Day observed on the Friday (July 4 is a Saturday)'],
    ['US', '2026-07-02T15:00:00Z', true, 'the Thursday before trades a full day'],
    ['US', '2026-11-26T15:00:00Z', false, 'Thanksgiving'],
    ['US', '2026-11-27T17:59:00Z', true, 'the day after Thanksgiving, before its 13:00 New York close'],
    ['US', '2026-11-27T18:00:00Z', false, 'the day after Thanksgiving, at its 13:00 New York close'],
    ['US', '2026-12-24T18:00:00Z', false, 'Christmas Eve closes at 13:00 New York'],
    ['US', '2027-12-31T15:00:00Z', true, "New Year's Day 2028 is a Saturday and not observed"],
    ['US', '2026-03-07T15:00:00Z', false, 'a Saturday'],
    ['US', '2026-04-03T15:00:00Z', false, 'Good Friday 2026'],
    ['US', '2027-03-26T15:00:00Z', false, 'Good Friday 2027'],
    ['US', '2028-04-14T15:00:00Z', false, 'Good Friday 2028'],
    ['XETRA', '2026-04-03T10:00:00Z', false, 'Good Friday 2026'],
    ['XETRA', '2027-03-26T10:00:00Z', false, 'Good Friday 2027'],
    ['XETRA', '2028-04-14T10:00:00Z', false, 'Good Friday 2028'],
    ['XETRA', '2026-04-06T10:00:00Z', false, 'Easter Monday'],
    ['XETRA', '2026-12-24T10:00:00Z', false, 'Christmas Eve'],
    ['XETRA', '2026-12-23T10:00:00Z', true, 'the day before Christmas Eve'],
    ['XETRA', '2028-05-01T10:00:00Z', false, 'Labour Day'],
    // Summer: 09:00 Berlin is 07:00 UTC, 17:30 is 15:30 UTC.
    ['XETRA', '2026-06-15T06:59:00Z', false, 'summer, before 09:00 Berlin'],
    ['XETRA', '2026-06-15T07:00:00Z', true, 'summer, 09:00 Berlin'],
    ['XETRA', '2026-06-15T15:30:00Z', false, 'summer, 17:30 Berlin'],
    // Winter: 08:00 and 16:30 UTC.
    ['XETRA', '2026-01-15T07:30:00Z', false, 'winter, 08:30 Berlin'],
    ['XETRA', '2026-01-15T16:29:00Z', true, 'winter, 17:29 Berlin'],
    // Summer: 09:30 New York is 13:30 UTC; winter 14:30 UTC.
    ['US', '2026-06-15T13:30:00Z', true, 'summer, 09:30 New York'],
    ['US', '2026-01-15T13:30:00Z', false, 'winter, 08:30 New York'],
    ['US', '2026-01-15T14:30:00Z', true, 'winter, 09:30 New York'],
    ['US', '2026-01-15T21:00:00Z', false, 'winter, 16:00 New York'],
  ] as const)('%s at %s: open %s (%s)', (name, now, open, _why) => {
    expect(hours[name].isOpen(at(now))).toBe(open);
  });

  it.each([
    // New York moves to summer time on 2026-03-08, Berlin only on 2026-03-29.
    ['US', '2026-01-15', '2026-01-15T14:30:00.000Z 2026-01-15T21:00:00.000Z'],
    ['US', '2026-03-16', '2026-03-16T13:30:00.000Z 2026-03-16T20:00:00.000Z'],
    ['XETRA', '2026-03-16', '2026-03-16T08:00:00.000Z 2026-03-16T16:30:00.000Z'],
    ['XETRA', '2026-03-30', '2026-03-30T07:00:00.000Z 2026-03-30T15:30:00.000Z'],
    ['US', '2026-10-30', '2026-10-30T13:30:00.000Z 2026-10-30T20:00:00.000Z'],
    ['XETRA', '2026-10-30', '2026-10-30T08:00:00.000Z 2026-10-30T16:30:00.000Z'],
    ['US', '2026-11-02', '2026-11-02T14:30:00.000Z 2026-11-02T21:00:00.000Z'],
  ] as const)('%s on %s: the session in UTC follows daylight saving time', (name, day, expected) => {
    expect(hours[name].sessions(at(`${day}T00:00:00Z`), at(`${day}T00:00:00Z`)).map(session)).toEqual([expected]);
  });

  it("the clock after Friday's close opens on Monday, across the weekend (and New York's clock change)", () => {
    expect(us.clock(at('2026-03-06T21:30:00Z'))).toEqual({
      isOpen: false,
      nextOpen: at('2026-03-09T13:30:00Z'),
      nextClose: at('2026-03-09T20:00:00Z'),
    });
    expect(xetra.clock(at('2026-12-23T17:00:00Z'))).toEqual({
      isOpen: false,
      nextOpen: at('2026-12-28T08:00:00Z'),
      nextClose: at('2026-12-28T16:30:00Z'),
    });
  });

  it('the clock while open closes today and next opens for the following session, skipping the holiday', () => {
    expect(us.clock(at('2026-11-25T15:00:00Z'))).toEqual({
      isOpen: true,
      nextOpen: at('2026-11-27T14:30:00Z'),
      nextClose: at('2026-11-25T21:00:00Z'),
    });
  });

  it.each([
    ['US', '2026-11-26T15:00:00Z', '2026-11-27T18:00:00.000Z', 'Thanksgiving: the next session, which closes early'],
    ['US', '2026-07-03T15:00:00Z', '2026-07-06T20:00:00.000Z', 'Independence Day observed: the Monday'],
    ['US', '2026-11-25T22:00:00Z', '2026-11-27T18:00:00.000Z', 'after the close before a holiday'],
    ['US', '2026-11-25T15:00:00Z', '2026-11-25T21:00:00.000Z', 'while open: today'],
    ['XETRA', '2026-04-03T10:00:00Z', '2026-04-07T15:30:00.000Z', 'Good Friday: the Tuesday after Easter Monday'],
    ['XETRA', '2026-12-24T10:00:00Z', '2026-12-28T16:30:00.000Z', 'Christmas Eve: the Monday after Christmas'],
  ] as const)('%s DAY order placed at %s expires at %s (%s)', (name, now, end, _why) => {
    expect(iso(hours[name].sessionEnd(at(now)))).toBe(end);
  });

  it('lists the real sessions of a holiday week, no weekend or holiday, early close shortened', () => {
    expect(us.sessions(at('2026-11-23T00:00:00Z'), at('2026-11-29T00:00:00Z')).map(session)).toEqual([
      '2026-11-23T14:30:00.000Z 2026-11-23T21:00:00.000Z',
      '2026-11-24T14:30:00.000Z 2026-11-24T21:00:00.000Z',
      '2026-11-25T14:30:00.000Z 2026-11-25T21:00:00.000Z',
      '2026-11-27T14:30:00.000Z 2026-11-27T18:00:00.000Z',
    ]);
    expect(xetra.sessions(at('2026-12-21T00:00:00Z'), at('2027-01-03T00:00:00Z')).map(session)).toEqual([
      '2026-12-21T08:00:00.000Z 2026-12-21T16:30:00.000Z',
      '2026-12-22T08:00:00.000Z 2026-12-22T16:30:00.000Z',
      '2026-12-23T08:00:00.000Z 2026-12-23T16:30:00.000Z',
      '2026-12-28T08:00:00.000Z 2026-12-28T16:30:00.000Z',
      '2026-12-29T08:00:00.000Z 2026-12-29T16:30:00.000Z',
      '2026-12-30T08:00:00.000Z 2026-12-30T16:30:00.000Z',
    ]);
  });

  it('counts the trading days of a year: its weekdays less the holidays listed', () => {
    // 261 weekdays in 2026 and 2027, 260 in 2028; US closes 10, 10 and 9 of them, XETRA 7, 5 and 5.
    const days = (h: TradingHours, year: number) => h.sessions(at(`${year}-01-01T00:00:00Z`), at(`${year}-12-31T00:00:00Z`)).length;
    expect([2026, 2027, 2028].map((y) => days(us, y))).toEqual([251, 251, 251]);
    expect([2026, 2027, 2028].map((y) => days(xetra, y))).toEqual([254, 256, 255]);
  });

  it('lists only weekdays of the years it covers, each early close before the regular close', () => {
    for (const calendar of Object.values(EXCHANGE_CALENDARS)) {
      for (const date of [...Object.keys(calendar.holidays), ...Object.keys(calendar.earlyCloses)]) {
        const day = at(`${date}T00:00:00Z`);
        expect({ date, weekday: day.getUTCDay() % 6 !== 0 }).toEqual({ date, weekday: true });
        expect(day.getUTCFullYear()).toBeGreaterThanOrEqual(calendar.firstYear);
        expect(day.getUTCFullYear()).toBeLessThanOrEqual(calendar.lastYear);
      }
      for (const early of Object.values(calendar.earlyCloses)) expect(early.close < calendar.close).toBe(true);
    }
  });

  // When this fails the year has come to add the next one: copy the exchanges' published
  // holidays and early closes into calendars/us.ts and calendars/xetra.ts, raise lastYear, then here.
  it('covers 2026 through 2028 and refuses dates beyond, naming the year', () => {
    for (const calendar of Object.values(EXCHANGE_CALENDARS)) expect([calendar.firstYear, calendar.lastYear]).toEqual([2026, 2028]);
    expect(us.sessionEnd(at('2028-12-29T15:00:00Z'))).toEqual(at('2028-12-29T21:00:00Z'));
    expect(() => us.sessionEnd(at('2028-12-29T22:00:00Z'))).toThrow(
      'The US trading calendar has no dates for 2029 (it covers 2026 to 2028)',
    );
    expect(() => xetra.sessions(at('2025-12-29T00:00:00Z'), at('2026-01-02T00:00:00Z'))).toThrow(
      /XETRA trading calendar has no dates for 2025/,
    );
    expect(() => new TradingHours('US').isOpen(at('2029-01-02T15:00:00Z'))).toThrow(/2029/);
  });
});

describe('an exchange calendar past its listed years', () => {
  it('is refused at start, naming the year to add', () => {
    expect(tradingHoursProblem('US', new Date('2027-06-01T00:00:00Z'))).toBeUndefined();
    expect(tradingHoursProblem('XETRA', new Date('2029-01-02T00:00:00Z'))).toBe(
      '"XETRA" lists holidays for 2026 to 2028 only, not 2029: add 2029 to libs/oms-service/src/market/calendars',
    );
    expect(tradingHoursProblem('US', new Date('2025-12-31T00:00:00Z'))).toMatch(/not 2025/);
  });
});
