import { loadOmsConfig } from '../config';
import { TradingHours } from './trading-hours';

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
});
