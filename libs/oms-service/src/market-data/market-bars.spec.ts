import type { DataSource } from 'typeorm';
import { openDatabase } from '@trading/db';
import { createTestDatabases, type TestDatabases } from '@trading/testing';
import { omsMigrations } from '../migrations';
import { MarketTicks } from './ticks';

/** The bars of every timeframe aggregated from the ticks themselves: what market_bars must always equal. */
const FROM_TICKS = `
  SELECT t.symbol, f.timeframe, date_bin(f.width, t.at, TIMESTAMPTZ '2000-01-01T00:00:00Z') AS bucket,
    (array_agg(price ORDER BY at, id))[1]::text AS open, max(price)::text AS high, min(price)::text AS low,
    (array_agg(price ORDER BY at DESC, id DESC))[1]::text AS close, sum(volume)::text AS volume, count(*)::int AS trades
  FROM market_ticks t CROSS JOIN (VALUES ('1Min', INTERVAL '1 minute'), ('5Min', INTERVAL '5 minutes'),
    ('1Hour', INTERVAL '1 hour'), ('1Day', INTERVAL '1 day')) AS f(timeframe, width)
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`;
const KEPT = `
  SELECT symbol, timeframe, bucket, open::text AS open, high::text AS high, low::text AS low, close::text AS close,
    volume::text AS volume, trades FROM market_bars ORDER BY 1, 2, 3`;
/** Sums compare as numbers (a kept sum and a fresh one may differ in trailing zeros only). */
const same = (rows: Array<Record<string, unknown>>) => rows.map((r) => ({ ...r, volume: Number(r['volume']) }));

const T0 = Date.parse('2026-03-02T14:29:40Z');

/**
 * market_bars: the bars the OMS serves, kept by a trigger as ticks arrive and built by their
 * migration from the ticks already kept. Each must equal the aggregation of the ticks, also
 * when many writers add ticks to the same buckets at once, out of time order.
 */
describe('market bars kept as ticks arrive', () => {
  let dbs: TestDatabases<'oms'>;
  let db: DataSource;
  const ticks = new MarketTicks(
    { append: async () => undefined } as never,
    { stream: 'unused', streamMaxLen: 100, retentionDays: 7, spread: '0.001' },
    { warn: () => undefined } as never,
  );

  beforeAll(async () => {
    dbs = await createTestDatabases(['oms']);
    // A database as it was before bars were kept, with a day of ticks in it.
    const before = await openDatabase({ url: dbs.urls.oms, entities: [], migrations: omsMigrations.slice(0, -1) });
    await before.query(
      `INSERT INTO market_ticks (symbol, price, volume, at)
       SELECT s, 100 + (n * 7919 % 1000) / 100.0, n % 5, TIMESTAMPTZ '2026-03-01T00:00:00Z' + n * INTERVAL '7 seconds'
       FROM generate_series(0, 12000) n CROSS JOIN (VALUES ('AAPL'), ('MSFT')) AS v(s)`,
    );
    await before.destroy();
    db = await openDatabase({ url: dbs.urls.oms, entities: [], migrations: omsMigrations, poolSize: 8 });
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    await dbs?.drop();
  });

  it('the migration builds the bars of the ticks already kept, exactly as aggregating them gives', async () => {
    const kept = await db.query(KEPT);
    expect(kept.length).toBeGreaterThan(1000);
    expect(same(kept)).toEqual(same(await db.query(FROM_TICKS)));
  });

  it('eight writers adding ticks to the same buckets at once, out of time order, lose no volume, extreme, open or close', async () => {
    // Each writer's ticks interleave in time with every other's, within the same minutes.
    const writer = (w: number) =>
      Array.from({ length: 40 }, (_, i) => ({
        symbol: 'TSLA',
        price: (200 + ((w * 37 + i * 13) % 50) / 4).toFixed(2),
        volume: String(w + 1),
        at: new Date(T0 + ((i * 8 + w) % 200) * 1000),
      }));
    await Promise.all(
      Array.from({ length: 8 }, (_, w) =>
        db.transaction(async (tx) => {
          for (let i = 0; i < 40; i += 5) await ticks.record(tx, writer(w).slice(i, i + 5));
        }),
      ),
    );
    expect(same(await db.query(KEPT))).toEqual(same(await db.query(FROM_TICKS)));
    const [day] = await db.query(`SELECT trades, volume::int AS volume FROM market_bars WHERE symbol = 'TSLA' AND timeframe = '1Day'`);
    expect(day).toEqual({ trades: 320, volume: 40 * (1 + 2 + 3 + 4 + 5 + 6 + 7 + 8) });
  });

  it('the retention prunes the bars whose bucket ended before it, with the ticks', async () => {
    // The cutoff a week before falls at 14:30:05, TSLA's ticks from 14:29:40: the minute and five minutes to 14:30 have ended.
    const now = new Date(T0 + 7 * 86400_000 + 25_000);
    await ticks.prune(db, now);
    const left = await db.query(`SELECT timeframe, min(bucket) AS first FROM market_bars WHERE symbol = 'TSLA' GROUP BY 1 ORDER BY 1`);
    expect(left.map((r: { timeframe: string; first: Date }) => [r.timeframe, r.first.toISOString()])).toEqual([
      ['1Day', '2026-03-02T00:00:00.000Z'],
      ['1Hour', '2026-03-02T14:00:00.000Z'],
      ['1Min', '2026-03-02T14:30:00.000Z'],
      ['5Min', '2026-03-02T14:30:00.000Z'],
    ]);
    expect(await db.query(`SELECT count(*)::int AS n FROM market_bars WHERE symbol <> 'TSLA'`)).toEqual([{ n: 0 }]);
  });
});
