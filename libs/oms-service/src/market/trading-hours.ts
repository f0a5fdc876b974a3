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
}
