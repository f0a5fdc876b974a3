/**
 * One date format everywhere a person reads one (pages, e-mails, the admin CLI): ISO dates
 * `YYYY-MM-DD` and times `YYYY-MM-DD HH:MM UTC`, whatever the page language.
 */
const isoDay = (d: Date) => d.toISOString().slice(0, 10);
export const isoMinute = (d: Date) => `${d.toISOString().replace('T', ' ').slice(0, 16)} UTC`;

/**
 * The last day a token is valid on. A token chosen to expire on 31 Jan is stored with the
 * exclusive end of that day (`2027-02-01T00:00Z`); people are shown the day they chose.
 */
export const lastValidDay = (exclusiveEnd: Date) => isoDay(new Date(exclusiveEnd.getTime() - 1));
