/**
 * A week of one instrument's ticks, one a second (the price feed's pace over the ticks'
 * retention), written straight into the OMS's database: what the bars row reads over. The
 * OMS's trigger keeps the bars as the ticks go in, as it does for the feed's own.
 */
import { Client } from 'pg';

const WEEK_OF_TICKS = 7 * 86_400;

export async function loadWeekOfTicks(omsDatabaseUrl: string, symbol: string): Promise<void> {
  const db = new Client({ connectionString: omsDatabaseUrl });
  await db.connect();
  try {
    const since = new Date(Date.now() - WEEK_OF_TICKS * 1000).toISOString();
    await db.query(
      `INSERT INTO market_ticks (symbol, price, volume, at)
       SELECT $1, 150 + (n::bigint * 7919 % 8000) / 100.0, 100 * (1 + n % 7), $2::timestamptz + n * INTERVAL '1 second'
       FROM generate_series(0, $3 - 1) AS n`,
      [symbol, since, WEEK_OF_TICKS],
    );
    await db.query('ANALYZE market_ticks');
  } finally {
    await db.end();
  }
}

/** `start` and `end` query parameters of one day in the middle of the week just written. */
export function middleDayOfTheWeek(now = Date.now()): string {
  const start = Math.floor(now / 86_400_000) * 86_400_000 - 4 * 86_400_000;
  return `start=${new Date(start).toISOString()}&end=${new Date(start + 86_400_000).toISOString()}`;
}
