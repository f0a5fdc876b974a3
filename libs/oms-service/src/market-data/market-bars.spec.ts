import type { DataSource } from 'typeorm';
import { openDatabase } from '@trading/db';
import { CursorCodec } from '@trading/pagination';
import { createTestDatabases, type TestDatabases } from '@trading/testing';
import { omsMigrations } from '../migrations';
import { MarketDataService } from './market-data.service';
import { MarketTicks } from './ticks';

/** The bars of every timeframe aggregated from the ticks themselves: what market_bars must always equal. */
const FROM_TICKS = `
  SELECT t.symbol, f.timeframe, date_bin(f.width, t.at, TIMESTAMPTZ '2000-01-01T00:00:00Z') AS bucket,
    (array_agg(price ORDER BY at, id))[1]::text AS open, max(price)::text AS high, min(price)::text AS low,
    (array_agg(price ORDER BY at DESC, id DESC))[1]::text AS close, sum(volume)::text AS volume, count(*)::int AS trades,
    sum(price * volume)::text AS notional
  FROM market_ticks t CROSS JOIN (VALUES ('1Min', INTERVAL '1 minute'), ('5Min', INTERVAL '5 minutes'),
    ('1Hour', INTERVAL '1 hour'), ('1Day', INTERVAL '1 day')) AS f(timeframe, width)
  WHERE t.symbol <> 'NVDA' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`;
/** NVDA lost a tick before bars kept their notional (as the retention prunes one): its bars no longer equal its ticks. */
const KEPT = `
  SELECT symbol, timeframe, bucket, open::text AS open, high::text AS high, low::text AS low, close::text AS close,
    volume::text AS volume, trades, notional::text AS notional FROM market_bars WHERE symbol <> 'NVDA' ORDER BY 1, 2, 3`;
/** Sums compare as numbers (a kept sum and a fresh one may differ in trailing zeros only). */
const same = (rows: Array<Record<string, unknown>>) =>
  rows.map((r) => ({ ...r, volume: Number(r['volume']), notional: Number(r['notional']) }));

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

  let market: MarketDataService;

  beforeAll(async () => {
    dbs = await createTestDatabases(['oms']);
    // A database as it was before bars were kept, with a day of ticks in it.
    const before = await openDatabase({ url: dbs.urls.oms, entities: [], migrations: omsMigrations.slice(0, -2) });
    await before.query(
      `INSERT INTO market_ticks (symbol, price, volume, at)
       SELECT s, 100 + (n * 7919 % 1000) / 100.0, n % 5, TIMESTAMPTZ '2026-03-01T00:00:00Z' + n * INTERVAL '7 seconds'
       FROM generate_series(0, 12000) n CROSS JOIN (VALUES ('AAPL'), ('MSFT')) AS v(s)`,
    );
    await before.destroy();
    // Then as it was once bars were kept, before their notional was: NVDA's first tick is pruned after its bars were made.
    const kept = await openDatabase({ url: dbs.urls.oms, entities: [], migrations: omsMigrations.slice(0, -1) });
    await kept.query(
      `INSERT INTO market_ticks (symbol, price, volume, at) VALUES ('NVDA', 100, 1, '2026-03-03T10:00:10Z'),
         ('NVDA', 101, 1, '2026-03-03T10:00:20Z'), ('NVDA', 102, 2, '2026-03-03T10:01:00Z'), ('NVDA', 103, 1, '2026-03-03T11:00:00Z')`,
    );
    await kept.query(`DELETE FROM market_ticks WHERE symbol = 'NVDA' AND at = '2026-03-03T10:00:10Z'`);
    await kept.destroy();
    db = await openDatabase({ url: dbs.urls.oms, entities: [], migrations: omsMigrations, poolSize: 8 });
    await db.query(
      `INSERT INTO instruments (symbol, name, currency, tick_size, lot_size, last_price, previous_close)
       VALUES ('GOOG', 'Alphabet', 'USD', 0.01, 1, 10, 10), ('AMZN', 'Amazon', 'USD', 0.01, 1, 10, 10), ('NVDA', 'Nvidia', 'USD', 0.01, 1, 100, 100)`,
    );
    const instruments = {
      find: async (symbol: string) =>
        (
          (await db.query(`SELECT symbol, currency, tick_size::text AS "tickSize" FROM instruments WHERE symbol = $1`, [
            symbol,
          ])) as unknown[]
        )[0] ?? null,
    };
    market = new MarketDataService(db, instruments as never, {} as never, new CursorCodec('bars-spec'), {
      spread: '0.001',
      retentionDays: 7,
    });
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

  describe('bars served', () => {
    // GOOG around a month's end, a week's start (Monday 2 March 2026) and the 15-minute and 4-hour boundaries.
    const GOOG: Array<[string, string, string]> = [
      ['2026-02-28T23:59:59Z', '10.00', '1'],
      ['2026-03-01T00:00:00Z', '11.00', '2'],
      ['2026-03-01T23:59:59Z', '12.00', '3'],
      ['2026-03-02T00:00:00Z', '9.00', '1'],
      ['2026-03-02T00:14:59Z', '9.50', '2'],
      ['2026-03-02T00:15:00Z', '9.25', '0'],
      ['2026-03-02T03:59:59Z', '10.10', '3'],
      ['2026-03-02T04:00:00Z', '10.20', '1'],
    ];
    const bar = (
      start: string,
      open: string,
      high: string,
      low: string,
      close: string,
      volume: string,
      trades: number,
      vwap: string | null,
    ) => ({
      start,
      open,
      high,
      low,
      close,
      volume,
      trades,
      tradeCount: trades,
      vwap,
    });
    const bars = async (timeframe: string, start: string, end: string, more: Record<string, unknown> = {}) =>
      market.bars({ symbol: 'GOOG', timeframe, start, end, ...more });

    beforeAll(async () => {
      await db.transaction((tx) =>
        ticks.record(
          tx,
          GOOG.map(([at, price, volume]) => ({ symbol: 'GOOG', price, volume, at: new Date(at) })),
        ),
      );
      await db.transaction((tx) =>
        ticks.record(tx, [
          { symbol: 'AMZN', price: '5.00', volume: '2', at: new Date('2026-03-01T12:00:00Z') },
          { symbol: 'AMZN', price: '6.00', volume: '1', at: new Date('2026-03-02T12:00:00Z') },
        ]),
      );
    });

    it('months are calendar months (UTC) and weeks start on Monday, aggregated from the days kept, with exact VWAP and trade counts', async () => {
      expect((await bars('1Month', '2026-02-01', '2026-04-01')).nodes).toEqual([
        bar('2026-02-01T00:00:00.000Z', '10.00', '10.00', '10.00', '10.00', '1', 1, '10.00'),
        // 126.5 traded over 12: 10.541666…, to 8 decimals.
        bar('2026-03-01T00:00:00.000Z', '11.00', '12.00', '9.00', '10.20', '12', 7, '10.54166667'),
      ]);
      expect((await bars('1Week', '2026-02-23', '2026-03-09')).nodes).toEqual([
        bar('2026-02-23T00:00:00.000Z', '10.00', '12.00', '10.00', '12.00', '6', 3, '11.33333333'),
        bar('2026-03-02T00:00:00.000Z', '9.00', '10.20', '9.00', '10.20', '7', 5, '9.78571429'),
      ]);
      // A start inside a bucket serves the buckets starting at or after it: the week of 2 March only.
      expect((await bars('1Week', '2026-02-24', '2026-03-09')).nodes.map((b) => b.start)).toEqual(['2026-03-02T00:00:00.000Z']);
      // A month's last tick (23:59:59) and the next one's first: one bar each side.
      expect((await bars('1Day', '2026-02-28', '2026-03-02')).nodes.map((b) => [b.start, b.close])).toEqual([
        ['2026-02-28T00:00:00.000Z', '10.00'],
        ['2026-03-01T00:00:00.000Z', '12.00'],
      ]);
    });

    it('15Min and 30Min from the five-minute bars, 2Hour and 4Hour from the hours; a bucket without volume has no VWAP', async () => {
      const day = ['2026-03-02', '2026-03-03'] as const;
      expect((await bars('15Min', ...day)).nodes).toEqual([
        bar('2026-03-02T00:00:00.000Z', '9.00', '9.50', '9.00', '9.50', '3', 2, '9.33333333'),
        bar('2026-03-02T00:15:00.000Z', '9.25', '9.25', '9.25', '9.25', '0', 1, null),
        bar('2026-03-02T03:45:00.000Z', '10.10', '10.10', '10.10', '10.10', '3', 1, '10.10'),
        bar('2026-03-02T04:00:00.000Z', '10.20', '10.20', '10.20', '10.20', '1', 1, '10.20'),
      ]);
      expect((await bars('30Min', ...day)).nodes.map((b) => [b.start, b.tradeCount, b.vwap])).toEqual([
        ['2026-03-02T00:00:00.000Z', 3, '9.33333333'],
        ['2026-03-02T03:30:00.000Z', 1, '10.10'],
        ['2026-03-02T04:00:00.000Z', 1, '10.20'],
      ]);
      const fourHours = [
        bar('2026-03-02T00:00:00.000Z', '9.00', '10.10', '9.00', '10.10', '6', 4, '9.71666667'),
        bar('2026-03-02T04:00:00.000Z', '10.20', '10.20', '10.20', '10.20', '1', 1, '10.20'),
      ];
      expect((await bars('4Hour', ...day)).nodes).toEqual(fourHours);
      expect((await bars('2Hour', ...day)).nodes).toEqual([
        bar('2026-03-02T00:00:00.000Z', '9.00', '9.50', '9.00', '9.25', '3', 3, '9.33333333'),
        bar('2026-03-02T02:00:00.000Z', '10.10', '10.10', '10.10', '10.10', '3', 1, '10.10'),
        fourHours[1],
      ]);
      // The kept sizes still answer as before, VWAP and tradeCount added.
      expect((await bars('5Min', '2026-03-02T00:10:00Z', '2026-03-02T00:20:00Z')).nodes).toEqual([
        bar('2026-03-02T00:10:00.000Z', '9.50', '9.50', '9.50', '9.50', '2', 1, '9.50'),
        bar('2026-03-02T00:15:00.000Z', '9.25', '9.25', '9.25', '9.25', '0', 1, null),
      ]);
    });

    it('pages with the token across a bucket boundary, each bar whole, and the token pages only its own query', async () => {
      const first = await bars('15Min', '2026-03-02', '2026-03-03', { limit: 1 });
      expect(first.nodes.map((b) => [b.start, b.tradeCount])).toEqual([['2026-03-02T00:00:00.000Z', 2]]);
      expect(first.nextPageToken).toEqual(first.nextCursor);
      const second = await bars('15Min', '2026-03-02', '2026-03-03', { limit: 2, pageToken: first.nextPageToken });
      expect(second.nodes.map((b) => b.start)).toEqual(['2026-03-02T00:15:00.000Z', '2026-03-02T03:45:00.000Z']);
      const third = await bars('15Min', '2026-03-02', '2026-03-03', { limit: 2, cursor: second.nextPageToken });
      expect([third.nodes.map((b) => b.start), third.nextPageToken]).toEqual([['2026-03-02T04:00:00.000Z'], null]);
      // Weekly pages: the first week, then the next from its Monday.
      const week = await bars('1Week', '2026-02-23', '2026-03-09', { limit: 1 });
      const next = await bars('1Week', '2026-02-23', '2026-03-09', { limit: 1, pageToken: week.nextPageToken });
      expect([week.nodes[0]!.start, next.nodes[0]!.start, next.nextPageToken]).toEqual([
        '2026-02-23T00:00:00.000Z',
        '2026-03-02T00:00:00.000Z',
        null,
      ]);
      await expect(bars('1Day', '2026-02-23', '2026-03-09', { pageToken: week.nextPageToken })).rejects.toMatchObject({
        code: 'BAD_USER_INPUT',
        options: { field: 'pageToken' },
      });
    });

    it('several symbols: at most limit bars in all, by symbol, paged across symbols; unknown symbols apart', async () => {
      const args = { symbols: ['GOOG', 'NOPE', 'AMZN', 'GOOG'], timeframe: '1Week', start: '2026-02-23', end: '2026-03-09' };
      const first = await market.barSets({ ...args, limit: 3 });
      expect(first).toMatchObject({ timeframe: '1Week', unknownSymbols: ['NOPE'], nextPageToken: expect.any(String) });
      expect(first.bars.map((s) => [s.symbol, s.currency, s.nodes.map((b) => [b.start, b.vwap])])).toEqual([
        [
          'AMZN',
          'USD',
          [
            ['2026-02-23T00:00:00.000Z', '5.00'],
            ['2026-03-02T00:00:00.000Z', '6.00'],
          ],
        ],
        ['GOOG', 'USD', [['2026-02-23T00:00:00.000Z', '11.33333333']]],
      ]);
      const second = await market.barSets({ ...args, limit: 3, pageToken: first.nextPageToken });
      expect(second.bars.map((s) => [s.symbol, s.nodes.map((b) => b.start)])).toEqual([['GOOG', ['2026-03-02T00:00:00.000Z']]]);
      expect(second.nextPageToken).toBeNull();
      // The whole answer at once, and a token only for the symbols it was made for.
      expect((await market.barSets({ ...args, limit: 1_000 })).bars.map((s) => s.nodes.length)).toEqual([2, 2]);
      await expect(market.barSets({ ...args, symbols: ['GOOG'], pageToken: first.nextPageToken })).rejects.toMatchObject({
        code: 'BAD_USER_INPUT',
        options: { field: 'pageToken' },
      });
      const refused = async (more: Record<string, unknown>) =>
        market.barSets({ ...args, ...more }).then(
          () => null,
          (e: { code: string; options: { field: string } }) => [e.code, e.options.field],
        );
      expect(await refused({ symbols: Array.from({ length: 51 }, (_, i) => `S${i}`) })).toEqual(['BAD_USER_INPUT', 'symbols']);
      expect(await refused({ symbols: [] })).toEqual(['BAD_USER_INPUT', 'symbols']);
      expect(await refused({ symbols: ['aapl!'] })).toEqual(['BAD_USER_INPUT', 'symbols']);
      expect(await refused({ limit: 10_001 })).toEqual(['BAD_USER_INPUT', 'limit']);
      expect(await refused({ limit: 0 })).toEqual(['BAD_USER_INPUT', 'limit']);
      expect(await refused({ timeframe: '3Hour' })).toEqual(['UNPROCESSABLE', 'timeframe']);
      expect(await refused({ end: '2026-02-30' })).toEqual(['UNPROCESSABLE', 'end']);
    });

    it('a bar kept before its notional was, whose first tick is gone, has no VWAP, nor has any bar made of it, also as ticks go on arriving', async () => {
      await db.transaction((tx) =>
        ticks.record(tx, [{ symbol: 'NVDA', price: '100.00', volume: '1', at: new Date('2026-03-03T10:00:30Z') }]),
      );
      const nvda = (timeframe: string) => market.bars({ symbol: 'NVDA', timeframe, start: '2026-03-03', end: '2026-03-04' });
      expect((await nvda('1Min')).nodes.map((b) => [b.start, b.tradeCount, b.vwap])).toEqual([
        ['2026-03-03T10:00:00.000Z', 3, null],
        ['2026-03-03T10:01:00.000Z', 1, '102.00'],
        ['2026-03-03T11:00:00.000Z', 1, '103.00'],
      ]);
      expect((await nvda('1Hour')).nodes.map((b) => b.vwap)).toEqual([null, '103.00']);
      expect((await nvda('4Hour')).nodes.map((b) => b.vwap)).toEqual([null]);
    });
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
    // AAPL's and MSFT's ticks all came before the cutoff (GOOG's, AMZN's and NVDA's run past it).
    expect(await db.query(`SELECT count(*)::int AS n FROM market_bars WHERE symbol IN ('AAPL', 'MSFT')`)).toEqual([{ n: 0 }]);
  });
});
