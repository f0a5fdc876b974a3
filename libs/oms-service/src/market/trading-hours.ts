const DAY_MS = 86400_000;
const SESSION = /^(\d{2}):(\d{2})-(\d{2}):(\d{2})$/;

/** Why a session setting is refused (undefined: it is `always` or a valid session), for config validation. */
export function tradingHoursProblem(spec: string): string | undefined {
  if (spec === 'always') return undefined;
  const m = SESSION.exec(spec);
  if (!m) return 'must be "always" or a daily UTC session HH:MM-HH:MM, e.g. 14:30-21:00';
  const [openH, openM, closeH, closeM] = m.slice(1).map(Number) as [number, number, number, number];
  if (openH > 23 || closeH > 23 || openM > 59 || closeM > 59) return 'has a time that is not on the clock (00:00 to 23:59)';
  if (openH === closeH && openM === closeM) return 'opens and closes at the same time: use "always" for a market that never closes';
  return undefined;
}

/**
 * When the paper market trades: `always` (the default), or one daily UTC session `HH:MM-HH:MM`,
 * which may run past midnight (`22:00-06:00` closes the next morning). DAY orders expire when
 * the session they were placed in ends (always-open: sessions are whole UTC days, ending at midnight).
 */
export class TradingHours {
  /** Minutes after UTC midnight. */
  private readonly session: { open: number; close: number } | null;

  constructor(readonly spec: string) {
    const problem = tradingHoursProblem(spec);
    if (problem) throw new Error(`OMS_TRADING_HOURS ${problem}`);
    const m = SESSION.exec(spec);
    this.session = m ? { open: Number(m[1]) * 60 + Number(m[2]), close: Number(m[3]) * 60 + Number(m[4]) } : null;
  }

  isOpen(now = new Date()): boolean {
    if (!this.session) return true;
    const { open, close } = this.session;
    const minute = now.getUTCHours() * 60 + now.getUTCMinutes();
    return open < close ? minute >= open && minute < close : minute >= open || minute < close;
  }

  /** The end of the session a DAY order placed `now` belongs to: the next close after now (always-open: the coming UTC midnight). */
  sessionEnd(now = new Date()): Date {
    return nextAt(this.session?.close ?? 0, now);
  }

  /**
   * The market clock: open now or not, when it next opens and when it next closes. Open, it next
   * opens for the following session; closed, it opens before it closes. Always open: it is open
   * from now on (`nextOpen` is now) and its day's session ends at the coming UTC midnight.
   */
  clock(now = new Date()): { isOpen: boolean; nextOpen: Date; nextClose: Date } {
    const nextClose = this.sessionEnd(now);
    if (!this.session) return { isOpen: true, nextOpen: new Date(now.getTime()), nextClose };
    return { isOpen: this.isOpen(now), nextOpen: nextAt(this.session.open, now), nextClose };
  }

  /**
   * The sessions opening on the UTC days from `first` to `last` (both included, any time of day),
   * every day (the paper market has no holidays); one past midnight closes the next day.
   */
  sessions(first: Date, last: Date): Array<{ open: Date; close: Date }> {
    const day0 = Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), first.getUTCDate());
    const sessions: Array<{ open: Date; close: Date }> = [];
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
