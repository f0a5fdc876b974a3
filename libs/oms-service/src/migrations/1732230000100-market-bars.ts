import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The bar sizes kept (timeframe as REST and GraphQL spell it, and its width): the `TIMEFRAMES`
 * that market-data.service.ts reads. A new size needs a migration of its own that adds its bars.
 */
const WIDTHS = `(VALUES ('1Min', INTERVAL '1 minute'), ('5Min', INTERVAL '5 minutes'), ('1Hour', INTERVAL '1 hour'),
  ('1Day', INTERVAL '1 day')) AS f(timeframe, width)`;

/**
 * One bar per (timeframe, bucket) of `ticks` (a table or a query of market_ticks' columns): open
 * the bucket's first tick by (at, id), high and low its extremes, close its last, volume the sum.
 * Buckets are aligned to UTC. Ordered by key, so concurrent writers lock the bars in one order.
 */
const barsOf = (ticks: string) => `
  SELECT t.symbol, f.timeframe, date_bin(f.width, t.at, TIMESTAMPTZ '2000-01-01T00:00:00Z') AS bucket,
    (array_agg(t.price ORDER BY t.at, t.id))[1] AS open,
    (array_agg(t.at ORDER BY t.at, t.id))[1] AS open_at,
    (array_agg(t.id ORDER BY t.at, t.id))[1] AS open_id,
    max(t.price) AS high, min(t.price) AS low,
    (array_agg(t.price ORDER BY t.at DESC, t.id DESC))[1] AS close,
    (array_agg(t.at ORDER BY t.at DESC, t.id DESC))[1] AS close_at,
    (array_agg(t.id ORDER BY t.at DESC, t.id DESC))[1] AS close_id,
    sum(t.volume) AS volume, count(*)::int AS trades
  FROM ${ticks} t CROSS JOIN ${WIDTHS}
  GROUP BY t.symbol, f.timeframe, bucket
  ORDER BY t.symbol, f.timeframe, bucket`;

/**
 * OHLCV bars kept as the ticks arrive, so a page of bars reads at most its own rows from an
 * index: aggregating a week of ticks per request held a core for a third of a second, and ten
 * aliased requests in one operation for two. A statement-level trigger folds each insert of
 * ticks into its bars (whoever inserts: the feed, an operator, a test), and the bars already
 * there are built from the ticks kept. Two inserts into one bucket at once lose nothing: the
 * upsert waits for the other's row, then adds volume and trades, widens high and low, and keeps
 * the open of the earliest tick and the close of the latest, by tick time (then id), whichever
 * commits first.
 */
export class MarketBars1732230000100 implements MigrationInterface {
  name = 'MarketBars1732230000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE market_bars (
        symbol text NOT NULL,
        timeframe text NOT NULL,
        bucket timestamptz NOT NULL,
        open numeric(20, 8) NOT NULL,
        open_at timestamptz NOT NULL,
        open_id bigint NOT NULL,
        high numeric(20, 8) NOT NULL,
        low numeric(20, 8) NOT NULL,
        close numeric(20, 8) NOT NULL,
        close_at timestamptz NOT NULL,
        close_id bigint NOT NULL,
        volume numeric NOT NULL,
        trades integer NOT NULL,
        PRIMARY KEY (symbol, timeframe, bucket)
      )`);
    await q.query(`
      CREATE FUNCTION market_bars_add_ticks() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO market_bars AS b (symbol, timeframe, bucket, open, open_at, open_id, high, low, close, close_at, close_id, volume, trades)
        ${barsOf('new_ticks')}
        ON CONFLICT (symbol, timeframe, bucket) DO UPDATE SET
          open = CASE WHEN (EXCLUDED.open_at, EXCLUDED.open_id) < (b.open_at, b.open_id) THEN EXCLUDED.open ELSE b.open END,
          open_at = CASE WHEN (EXCLUDED.open_at, EXCLUDED.open_id) < (b.open_at, b.open_id) THEN EXCLUDED.open_at ELSE b.open_at END,
          open_id = CASE WHEN (EXCLUDED.open_at, EXCLUDED.open_id) < (b.open_at, b.open_id) THEN EXCLUDED.open_id ELSE b.open_id END,
          high = GREATEST(b.high, EXCLUDED.high),
          low = LEAST(b.low, EXCLUDED.low),
          close = CASE WHEN (EXCLUDED.close_at, EXCLUDED.close_id) > (b.close_at, b.close_id) THEN EXCLUDED.close ELSE b.close END,
          close_at = CASE WHEN (EXCLUDED.close_at, EXCLUDED.close_id) > (b.close_at, b.close_id) THEN EXCLUDED.close_at ELSE b.close_at END,
          close_id = CASE WHEN (EXCLUDED.close_at, EXCLUDED.close_id) > (b.close_at, b.close_id) THEN EXCLUDED.close_id ELSE b.close_id END,
          volume = b.volume + EXCLUDED.volume,
          trades = b.trades + EXCLUDED.trades;
        RETURN NULL;
      END $$`);
    // Creating the trigger locks out new ticks until this migration commits, so the bars built
    // below and those the trigger keeps from then on cover every tick exactly once.
    await q.query(`
      CREATE TRIGGER market_bars_add_ticks AFTER INSERT ON market_ticks
      REFERENCING NEW TABLE AS new_ticks FOR EACH STATEMENT EXECUTE FUNCTION market_bars_add_ticks()`);
    await q.query(
      `INSERT INTO market_bars (symbol, timeframe, bucket, open, open_at, open_id, high, low, close, close_at, close_id, volume, trades)
       ${barsOf('market_ticks')}`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER market_bars_add_ticks ON market_ticks');
    await q.query('DROP FUNCTION market_bars_add_ticks()');
    await q.query('DROP TABLE market_bars');
  }
}
