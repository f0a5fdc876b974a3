/**
 * When the paper market trades: `always` (the default), or one daily UTC session `HH:MM-HH:MM`.
 * DAY orders expire when the session they were placed in ends (always-open: at UTC midnight).
 */
export class TradingHours {
  private readonly session: { open: number; close: number } | null;

  constructor(readonly spec: string) {
    const m = /^(\d{2}):(\d{2})-(\d{2}):(\d{2})$/.exec(spec);
    this.session = m ? { open: Number(m[1]) * 60 + Number(m[2]), close: Number(m[3]) * 60 + Number(m[4]) } : null;
  }

  isOpen(now = new Date()): boolean {
    if (!this.session) return true;
    const minute = now.getUTCHours() * 60 + now.getUTCMinutes();
    return minute >= this.session.open && minute < this.session.close;
  }

  /** The end of the session a DAY order placed `now` belongs to. */
  sessionEnd(now = new Date()): Date {
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    if (!this.session) return new Date(midnight + 86400_000);
    const close = midnight + this.session.close * 60_000;
    return new Date(now.getTime() < close ? close : close + 86400_000);
  }

  /**
   * The market clock: open now or not, and when it next opens and closes. Always open: sessions
   * are whole UTC days, so it next closes (and at once opens again) at the coming UTC midnight.
   */
  clock(now = new Date()): { isOpen: boolean; nextOpen: Date; nextClose: Date } {
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    const nextClose = this.sessionEnd(now);
    if (!this.session) return { isOpen: true, nextOpen: new Date(midnight + 86400_000), nextClose };
    const open = midnight + this.session.open * 60_000;
    return { isOpen: this.isOpen(now), nextOpen: new Date(now.getTime() < open ? open : open + 86400_000), nextClose };
  }

  /** The sessions of the UTC days from `first` to `last` (both included, any time of day), every day (the paper market has no holidays). */
  sessions(first: Date, last: Date): Array<{ open: Date; close: Date }> {
    const day0 = Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), first.getUTCDate());
    const sessions: Array<{ open: Date; close: Date }> = [];
    for (let day = day0; day <= last.getTime(); day += 86400_000) {
      const [open, close] = this.session ? [this.session.open, this.session.close] : [0, 24 * 60];
      sessions.push({ open: new Date(day + open * 60_000), close: new Date(day + close * 60_000) });
    }
    return sessions;
  }
}
