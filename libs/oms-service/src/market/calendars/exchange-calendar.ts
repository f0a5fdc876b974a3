/**
 * An exchange's trading calendar, kept as data so a reviewer can hold it against the exchange's
 * published list: the regular session in the exchange's own wall-clock time, and the full
 * closures and early closes of the years it covers. Weekends are closed without being listed;
 * the UTC instants follow from the IANA time zone, so daylight saving time needs no data.
 */
export interface ExchangeCalendar {
  /** The OMS_TRADING_HOURS value that selects it. */
  readonly name: string;
  /** Who trades on it, for the account configuration and logs. */
  readonly description: string;
  /** IANA time zone the session times are in. */
  readonly timeZone: string;
  /** Regular session, local `HH:MM`. */
  readonly open: string;
  readonly close: string;
  /** Years whose holidays and early closes are all listed below; outside them the calendar refuses to answer. */
  readonly firstYear: number;
  readonly lastYear: number;
  /** Weekdays the exchange is closed (`YYYY-MM-DD` → holiday). A holiday on a weekend is not listed. */
  readonly holidays: Readonly<Record<string, string>>;
  /** Weekdays the session closes early (`YYYY-MM-DD` → local close `HH:MM` and why). */
  readonly earlyCloses: Readonly<Record<string, { readonly close: string; readonly reason: string }>>;
}
