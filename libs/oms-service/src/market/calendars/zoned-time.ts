const MINUTE_MS = 60_000;
const DAY_MS = 86400_000;

// Building a formatter is the costly part; the market asks the same zone on every engine tick.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** What the clocks in `timeZone` show at `at`, written as if it were a UTC instant (whole seconds). */
function wallClock(timeZone: string, at: number): number {
  const parts = formatter(timeZone).formatToParts(new Date(at));
  const part = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)?.value);
  return Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'), part('second'));
}

/** The date the clocks in `timeZone` show at `at`, as the UTC midnight of that date. */
export function zonedDay(timeZone: string, at: Date): number {
  const wall = wallClock(timeZone, at.getTime());
  return wall - (((wall % DAY_MS) + DAY_MS) % DAY_MS);
}

/**
 * The instant the clocks in `timeZone` show `minute` minutes past midnight on `day` (the UTC
 * midnight of the date). The offset is taken once at a guess and once more at the result, which
 * settles it when daylight saving time changes in between; exchange sessions never start in the
 * hour the clocks skip.
 */
export function zonedInstant(timeZone: string, day: number, minute: number): Date {
  const wall = day + minute * MINUTE_MS;
  const guess = wall - (wallClock(timeZone, wall) - wall);
  return new Date(wall - (wallClock(timeZone, guess) - guess));
}
