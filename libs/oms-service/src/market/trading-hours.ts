import { EXCHANGE_CALENDARS, type ExchangeCalendar, zonedDay, zonedInstant } from './calendars';

const DAY_MS = 86400_000;
const SESSION = /^(\d{2}):(\d{2})-(\d{2}):(\d{2})$/;
const CALENDAR_NAMES = Object.keys(EXCHANGE_CALENDARS)
  .map((name) => `"${name}"`)
  .join(', ');

/** Why a session setting is refused (undefined: `always`, an exchange calendar or a valid session), for config validation. */
export function tradingHoursProblem(spec: string, now = new Date()): string | undefined {
  if (spec === 'always') return undefined;
  if (Object.hasOwn(EXCHANGE_CALENDARS, spec)) {
    // Refused at start rather than failing every engine pass once the listed years run out.
    const { firstYear, lastYear } = EXCHANGE_CALENDARS[spec]!;
    const year = now.getUTCFullYear();
    if (year < firstYear || year > lastYear)
      return `"${spec}" lists holidays for ${firstYear} to ${lastYear} only, not ${year}: add ${year} to libs/oms-service/src/market/calendars`;
    return undefined;
  }
  const m = SESSION.exec(spec);
  if (!m) return `must be "always", an exchange calendar (${CALENDAR_NAMES}) or a daily UTC session HH:MM-HH:MM, e.g. 14:30-21:00`;
  const [openH, openM, closeH, closeM] = m.slice(1).map(Number) as [number, number, number, number];
  if (openH > 23 || closeH > 23 || openM > 59 || closeM > 59) return 'has a time that is not on the clock (00:00 to 23:59)';
  if (openH === closeH && openM === closeM) return 'opens and closes at the same time: use "always" for a market that never closes';
  return undefined;
}

type Session = { open: Date; close: Date };

/**
 * When the paper market trades: `always` (the default), one daily UTC session `HH:MM-HH:MM`,
 * which may run past midnight (`22:00-06:00` closes the next morning), or a real exchange's
 * calendar (`US`, `XETRA`: weekends, holidays and early closes, in the exchange's time zone).
 * DAY orders expire when the session they were placed in ends (always-open: sessions are whole
 * UTC days, ending at midnight); one placed while the market is closed belongs to the next session.
 */
export class TradingHours {
  /** Minutes after UTC midnight. */
  private readonly session: { open: number; close: number } | null;
  private readonly calendar: CalendarSessions | null;
  /** How the account configuration tells the hours. */
  readonly description: string;

  constructor(readonly spec: string) {
    const problem = tradingHoursProblem(spec);
    if (problem) throw new Error(`OMS_TRADING_HOURS ${problem}`);
    const exchange = Object.hasOwn(EXCHANGE_CALENDARS, spec) ? EXCHANGE_CALENDARS[spec] : undefined;
    this.calendar = exchange ? new CalendarSessions(exchange) : null;
    const m = SESSION.exec(spec);
    this.session = m ? { open: Number(m[1]) * 60 + Number(m[2]), close: Number(m[3]) * 60 + Number(m[4]) } : null;
    this.description = exchange ? exchange.description : spec === 'always' ? 'always open' : `${spec} UTC`;
  }

  isOpen(now = new Date()): boolean {
    if (this.calendar) return this.calendar.openAt(now);
    if (!this.session) return true;
    const { open, close } = this.session;
    const minute = now.getUTCHours() * 60 + now.getUTCMinutes();
    return open < close ? minute >= open && minute < close : minute >= open || minute < close;
  }

  /** The end of the session a DAY order placed `now` belongs to: the next close after now (always-open: the coming UTC midnight). */
  sessionEnd(now = new Date()): Date {
    if (this.calendar) return this.calendar.next(now, 'close').close;
    return nextAt(this.session?.close ?? 0, now);
  }

  /**
   * The market clock: open now or not, when it next opens and when it next closes. Open, it next
   * opens for the following session; closed, it opens before it closes. Always open: it is open
   * from now on (`nextOpen` is now) and its day's session ends at the coming UTC midnight.
   */
  clock(now = new Date()): { isOpen: boolean; nextOpen: Date; nextClose: Date } {
    if (this.calendar) return { isOpen: this.isOpen(now), nextOpen: this.calendar.next(now, 'open').open, nextClose: this.sessionEnd(now) };
    const nextClose = this.sessionEnd(now);
    if (!this.session) return { isOpen: true, nextOpen: new Date(now.getTime()), nextClose };
    return { isOpen: this.isOpen(now), nextOpen: nextAt(this.session.open, now), nextClose };
  }

  /**
   * The sessions opening on the UTC days from `first` to `last` (both included, any time of day):
   * every day for a UTC session, one past midnight closing the next day; an exchange calendar's
   * trading days only (its dates; US and XETRA sessions open on the same UTC date), early closes shortened.
   */
  sessions(first: Date, last: Date): Session[] {
    const day0 = Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), first.getUTCDate());
    if (this.calendar) {
      const sessions: Session[] = [];
      for (let day = day0; day <= last.getTime(); day += DAY_MS) {
        const session = this.calendar.on(day);
        if (session) sessions.push(session);
      }
      return sessions;
    }
    const sessions: Session[] = [];
    for (let day = day0; day <= last.getTime(); day += DAY_MS) {
      const [open, close] = this.session ? [this.session.open, this.session.close] : [0, 24 * 60];
      sessions.push({ open: new Date(day + open * 60_000), close: new Date(day + close * 60_000 + (close <= open ? DAY_MS : 0)) });
    }
    return sessions;
  }
}

/** The first moment after `now` at `minute` minutes past a UTC midnight. */
function nextAt(minute: number, now: Date): Date {
  const at = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) + minute * 60_000;
  return new Date(at > now.getTime() ? at : at + DAY_MS);
}

/** Minutes past midnight of a `HH:MM` from the calendar data. */
function minutes(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number) as [number, number];
  return h * 60 + m;
}

/**
 * An exchange calendar's sessions as UTC instants, worked out per date on first use. Dates outside
 * the years the data lists are refused: guessing the holidays there would trade on a closed day.
 */
class CalendarSessions {
  /** Open and close instants (ms) by exchange date; null: closed that day. */
  private readonly byDay = new Map<number, { open: number; close: number } | null>();

  constructor(private readonly exchange: ExchangeCalendar) {}

  /** The session on the exchange date `day` (its UTC midnight), null when the exchange does not trade. */
  on(day: number): Session | null {
    let times = this.byDay.get(day);
    if (times === undefined) {
      times = this.work(day);
      this.byDay.set(day, times);
    }
    return times && { open: new Date(times.open), close: new Date(times.close) };
  }

  private work(day: number): { open: number; close: number } | null {
    const date = new Date(day);
    const year = date.getUTCFullYear();
    const { name, firstYear, lastYear, timeZone, holidays, earlyCloses } = this.exchange;
    if (year < firstYear || year > lastYear)
      throw new Error(
        `The ${name} trading calendar has no dates for ${year} (it covers ${firstYear} to ${lastYear}): add ${year} to libs/oms-service/src/market/calendars`,
      );
    const key = date.toISOString().slice(0, 10);
    if (date.getUTCDay() === 0 || date.getUTCDay() === 6 || Object.hasOwn(holidays, key)) return null;
    const close = Object.hasOwn(earlyCloses, key) ? earlyCloses[key]!.close : this.exchange.close;
    return {
      open: zonedInstant(timeZone, day, minutes(this.exchange.open)).getTime(),
      close: zonedInstant(timeZone, day, minutes(close)).getTime(),
    };
  }

  openAt(now: Date): boolean {
    const session = this.on(zonedDay(this.exchange.timeZone, now));
    return session !== null && now >= session.open && now < session.close;
  }

  /** The first session, from the exchange's date today on, whose open (or close) is still to come. */
  next(now: Date, edge: 'open' | 'close'): Session {
    // The longest closure is a holiday next to a weekend; the year check ends the walk at the data's end.
    for (let day = zonedDay(this.exchange.timeZone, now); ; day += DAY_MS) {
      const session = this.on(day);
      if (session && session[edge] > now) return session;
    }
  }
}
