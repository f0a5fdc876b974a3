import type { MigrationInterface, QueryRunner } from 'typeorm';

const WIDTHS = `(VALUES ('1Min', INTERVAL '1 minute'), ('5Min', INTERVAL '5 minutes'), ('1Hour', INTERVAL '1 hour'),
  ('1Day', INTERVAL '1 day')) AS f(timeframe, width)`;

/**
 * One bar per (timeframe, bucket) of `ticks`, as MarketBars1732230000100 folds them, plus the
 * traded notional (sum of price × volume), so a bar's VWAP is notional / volume.
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
    sum(t.volume) AS volume, count(*)::int AS trades, sum(t.price * t.volume) AS notional
  FROM ${ticks} t CROSS JOIN ${WIDTHS}
  GROUP BY t.symbol, f.timeframe, bucket
  ORDER BY t.symbol, f.timeframe, bucket`;

/**
 * Bars carry their traded notional, for the volume-weighted average price. The trigger adds it
 * in the same upsert as volume and trades (no new rows per tick). Bars kept before this
 * migration get it from their ticks when every one of them is still kept (the tick count
 * matches); the others, whose first ticks the retention already pruned, keep a null notional,
 * and so a null VWAP, until they age out themselves.
 */
export class MarketBarVwap1732230000110 implements MigrationInterface {
  name = 'MarketBarVwap1732230000110';

  async up(q: QueryRunner): Promise<void> {
    // Locks out the trigger's upserts (and so new ticks) until this migration commits: the
    // backfill below and the trigger from then on see every tick once.
    await q.query('ALTER TABLE market_bars ADD COLUMN notional numeric');
    await q.query(`
      CREATE OR REPLACE FUNCTION market_bars_add_ticks() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO market_bars AS b (symbol, timeframe, bucket, open, open_at, open_id, high, low, close, close_at, close_id, volume, trades, notional)
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
          trades = b.trades + EXCLUDED.trades,
          -- A bar whose notional is unknown (kept before it was) stays unknown: null + x is null.
          notional = b.notional + EXCLUDED.notional;
        RETURN NULL;
      END $$`);
    await q.query(`
      UPDATE market_bars b SET notional = t.notional
      FROM (${barsOf('market_ticks')}) t
      WHERE (b.symbol, b.timeframe, b.bucket) = (t.symbol, t.timeframe, t.bucket) AND b.trades = t.trades`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION market_bars_add_ticks() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO market_bars AS b (symbol, timeframe, bucket, open, open_at, open_id, high, low, close, close_at, close_id, volume, trades)
        SELECT symbol, timeframe, bucket, open, open_at, open_id, high, low, close, close_at, close_id, volume, trades
        FROM (${barsOf('new_ticks')}) t
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
    await q.query('ALTER TABLE market_bars DROP COLUMN notional');
  }
}
