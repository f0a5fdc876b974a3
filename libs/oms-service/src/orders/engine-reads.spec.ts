import Decimal from 'decimal.js';
import type { DataSource } from 'typeorm';
import { openDatabase } from '@trading/db';
import { createTestDatabases, type TestDatabases } from '@trading/testing';
import { OPEN_ORDER_CAP_SETTING, omsMigrations } from '../migrations';
import { bidAsk } from '../market-data/quote';
import { ASK_SQL, BID_SQL, CAN_ACT, ENGINE_READS } from './engine-reads';

const BOOK = 3000;
/** The quoted spread: at a price of 100 on a 0.01 tick, bid 99.95 and ask 100.05. */
const SPREAD = '0.001';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** The most rows any one step of the plan read from `orders`: what it returned, and what it read and threw away. */
function mostOrderRowsRead(node: PlanNode): number {
  const own =
    node['Relation Name'] === 'orders'
      ? (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * node['Actual Loops']
      : 0;
  return Math.max(own, ...(node.Plans ?? []).map(mostOrderRowsRead));
}

/**
 * The engine's reads, every pass of every instance, against a book of 3,000 working orders
 * resting away from the price and a history of filled ones: they find exactly the orders that can
 * act, and never read the resting book to do it (before migration 070 every pass read every
 * working order, about 50 ms of PostgreSQL CPU per pass with 25,000 of them).
 */
describe('the engine reads only what can act', () => {
  let dbs: TestDatabases<'oms'>;
  let db: DataSource;

  const order = (o: {
    ref: string;
    symbol?: string;
    side: 'BUY' | 'SELL';
    type: string;
    tif?: string;
    limit?: string;
    stop?: string;
    collar?: string;
    status?: string;
    triggered?: boolean;
    expiresAt?: string;
    filled?: string;
  }) =>
    db.query(
      `INSERT INTO orders (account_id, client_order_id, symbol, side, type, time_in_force, quantity, limit_price, stop_price, collar_price,
                           status, user_id, currency, hold_amount, submitted_at, triggered_at, expires_at, filled_quantity)
       VALUES ('00000000-0000-4000-8000-000000000001', $1, $2, $3, $4, $5, 10, $6, $7, $8, $9, 'u1', 'USD', 1000, now(),
               CASE WHEN $10 THEN now() END, $11, $12) RETURNING id`,
      [
        o.ref,
        o.symbol ?? 'AAA',
        o.side,
        o.type,
        o.tif ?? 'GTC',
        o.limit ?? null,
        o.stop ?? null,
        o.collar ?? null,
        o.status ?? 'NEW',
        !!o.triggered,
        o.expiresAt ?? null,
        o.filled ?? '0',
      ],
    );

  beforeAll(async () => {
    dbs = await createTestDatabases(['oms']);
    db = await openDatabase({
      url: dbs.urls.oms,
      entities: [],
      migrations: omsMigrations,
      settings: { [OPEN_ORDER_CAP_SETTING]: String(BOOK * 10) },
    });
    await db.query(
      `INSERT INTO instruments (symbol, name, currency, tick_size, lot_size, last_price, previous_close, tradable)
       VALUES ('AAA', 'A', 'USD', 0.01, 1, 100, 100, true), ('BBB', 'B', 'USD', 0.01, 1, 100, 100, true), ('HLT', 'Halted', 'USD', 0.01, 1, 100, 100, false)`,
    );
    // The resting book: limits, stops and DAY orders the price of 100 does not reach, on both tradable instruments.
    await db.query(
      `INSERT INTO orders (account_id, client_order_id, symbol, side, type, time_in_force, quantity, limit_price, stop_price, status, user_id,
                           currency, hold_amount, submitted_at, expires_at)
       SELECT ('00000000-0000-4000-8000-' || lpad((g % 40)::text, 12, '0'))::uuid, 'rest-' || g, CASE g % 2 WHEN 0 THEN 'AAA' ELSE 'BBB' END,
              CASE WHEN g % 5 < 3 THEN 'BUY' ELSE 'SELL' END,
              CASE WHEN g % 5 IN (0, 3) THEN 'STOP_LIMIT' ELSE 'LIMIT' END,
              CASE WHEN g % 7 = 0 THEN 'DAY' ELSE 'GTC' END, 1,
              CASE WHEN g % 5 < 3 THEN 60 + g % 30 ELSE 110 + g % 30 END,
              CASE g % 5 WHEN 0 THEN 120 WHEN 3 THEN 80 END,
              'NEW', 'u', 'USD', 100, now(), CASE WHEN g % 7 = 0 THEN now() + interval '6 hours' END
       FROM generate_series(1, ${BOOK}) g`,
    );
    // History: filled and cancelled orders are in no index the engine reads.
    await db.query(
      `INSERT INTO orders (account_id, client_order_id, symbol, side, type, time_in_force, quantity, status, user_id, currency, hold_amount,
                           submitted_at, filled_quantity, filled_at)
       SELECT ('00000000-0000-4000-8000-' || lpad((g % 40)::text, 12, '0'))::uuid, 'done-' || g, 'AAA', 'BUY', 'MARKET', 'DAY', 1, 'FILLED', 'u',
              'USD', 100, now(), 1, now()
       FROM generate_series(1, ${BOOK}) g`,
    );
    await db.query('ANALYZE orders');
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    await dbs?.drop();
  });

  const refs = async (rows: Array<{ id: string }>) =>
    rows.length
      ? (
          (await db.query('SELECT client_order_id FROM orders WHERE id = ANY($1)', [rows.map((r) => r.id)])) as Array<{
            client_order_id: string;
          }>
        )
          .map((r) => r.client_order_id)
          .sort()
      : [];

  it('finds every order that can act at the quote, and no other', async () => {
    const acts = [
      order({ ref: 'market-buy', side: 'BUY', type: 'MARKET' }),
      order({ ref: 'market-sell', side: 'SELL', type: 'MARKET', symbol: 'BBB' }),
      order({ ref: 'limit-buy-at-ask', side: 'BUY', type: 'LIMIT', limit: '100.05' }),
      order({ ref: 'limit-sell-at-bid', side: 'SELL', type: 'LIMIT', limit: '99.95' }),
      order({ ref: 'limit-sell-below', side: 'SELL', type: 'LIMIT', limit: '99' }),
      order({ ref: 'collar-at-ask', side: 'BUY', type: 'MARKET', collar: '100.05' }),
      order({ ref: 'part-filled-sell', side: 'SELL', type: 'LIMIT', limit: '95', status: 'PARTIALLY_FILLED', filled: '4' }),
      order({ ref: 'stop-buy-reached', side: 'BUY', type: 'STOP', stop: '95' }),
      order({ ref: 'stop-sell-reached', side: 'SELL', type: 'STOP_LIMIT', stop: '105', limit: '90' }),
      order({ ref: 'triggered-stop-limit', side: 'BUY', type: 'STOP_LIMIT', stop: '90', limit: '101', triggered: true }),
      order({ ref: 'ioc-away', side: 'BUY', type: 'LIMIT', tif: 'IOC', limit: '50' }),
      order({ ref: 'fok-away', side: 'SELL', type: 'LIMIT', tif: 'FOK', limit: '200' }),
    ];
    const rests = [
      order({ ref: 'collar-below-price', side: 'BUY', type: 'MARKET', collar: '99' }),
      // Between the bid and the ask: the last price alone would have filled them.
      order({ ref: 'limit-buy-at-last', side: 'BUY', type: 'LIMIT', limit: '100' }),
      order({ ref: 'limit-buy-below-ask', side: 'BUY', type: 'LIMIT', limit: '100.04' }),
      order({ ref: 'limit-sell-at-last', side: 'SELL', type: 'LIMIT', limit: '100' }),
      order({ ref: 'limit-sell-above-bid', side: 'SELL', type: 'LIMIT', limit: '99.96' }),
      order({ ref: 'collar-below-ask', side: 'BUY', type: 'MARKET', collar: '100.04' }),
      order({ ref: 'triggered-limit-away', side: 'BUY', type: 'STOP_LIMIT', stop: '90', limit: '90', triggered: true }),
      order({ ref: 'halted', side: 'BUY', type: 'MARKET', symbol: 'HLT' }),
      order({ ref: 'accepted', side: 'BUY', type: 'MARKET', status: 'ACCEPTED' }),
    ];
    await Promise.all([...acts, ...rests]);
    const [frozen] = await order({ ref: 'frozen-by-replace', side: 'BUY', type: 'MARKET' });
    await db.query('UPDATE orders SET replaced_by_order_id = gen_random_uuid() WHERE id = $1', [frozen.id]);

    const expected = [
      'collar-at-ask',
      'fok-away',
      'ioc-away',
      'limit-buy-at-ask',
      'limit-sell-at-bid',
      'limit-sell-below',
      'market-buy',
      'market-sell',
      'part-filled-sell',
      'stop-buy-reached',
      'stop-sell-reached',
      'triggered-stop-limit',
    ];
    const found = await db.query(ENGINE_READS.WORTH_A_LOOK.text, [SPREAD]);
    expect(await refs(found)).toEqual(expected);
    // The same as testing every working order, which is what the engine decides on.
    const everyWorkingOrder = await db.query(
      `SELECT o.id FROM orders o JOIN instruments i ON i.symbol = o.symbol
       WHERE o.status IN ('NEW', 'PARTIALLY_FILLED') AND o.replaced_by_order_id IS NULL AND ${CAN_ACT}`,
      [SPREAD],
    );
    expect(await refs(everyWorkingOrder)).toEqual(expected);
  });

  it.each([
    ['WORTH_A_LOOK', [SPREAD]],
    ['EXPIRED', []],
    ['UNCONFIRMED_REPLACEMENTS', [60]],
    ['UNCONFIRMED_PLACEMENTS', [60]],
  ] as const)('%s reads no more than a few dozen orders of a book of thousands', async (name, values) => {
    const [{ 'QUERY PLAN': plan }] = await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${ENGINE_READS[name].text}`, [...values]);
    expect(mostOrderRowsRead(plan[0].Plan)).toBeLessThan(50);
  });

  it('still finds a DAY order past its session, and a placement never confirmed', async () => {
    await order({
      ref: 'day-past',
      side: 'BUY',
      type: 'LIMIT',
      tif: 'DAY',
      limit: '60',
      expiresAt: new Date(Date.now() - 60_000).toISOString(),
    });
    const [stale] = await order({ ref: 'unconfirmed', side: 'BUY', type: 'LIMIT', limit: '60', status: 'ACCEPTED' });
    await db.query(`UPDATE orders SET created_at = now() - interval '2 minutes' WHERE id = $1`, [stale.id]);
    expect(await refs(await db.query(ENGINE_READS.EXPIRED.text))).toEqual(['day-past']);
    expect(await refs(await db.query(ENGINE_READS.UNCONFIRMED_PLACEMENTS.text, [60]))).toEqual(['unconfirmed']);
  });

  it('reckons the bid and ask in SQL exactly as the published quote does', async () => {
    const prices: Array<[string, string]> = [];
    for (const tick of ['0.01', '0.02', '0.0001', '1'])
      for (const last of ['0.01', '0.02', '0.03', '1', '1.99', '10', '99.99', '100', '189.5', '190', '402.1', '1234.56', '99999'])
        if (new Decimal(last).mod(tick).isZero()) prices.push([last, tick]);
    for (const spread of ['0', '0.0007', SPREAD, '0.02']) {
      const rows: Array<{ bid: string; ask: string }> = await db.query(
        `SELECT (${BID_SQL})::text AS bid, (${ASK_SQL})::text AS ask
         FROM unnest($2::numeric[], $3::numeric[]) WITH ORDINALITY AS i(last_price, tick_size, n) ORDER BY n`,
        [spread, prices.map((p) => p[0]), prices.map((p) => p[1])],
      );
      const sql = rows.map((r) => `${new Decimal(r.bid).toFixed()}/${new Decimal(r.ask).toFixed()}`);
      const published = prices.map(([last, tick]) => {
        const { bid, ask } = bidAsk(last, tick, spread);
        return `${bid.toFixed()}/${ask.toFixed()}`;
      });
      expect({ spread, quotes: sql }).toEqual({ spread, quotes: published });
    }
    expect(prices.length).toBeGreaterThan(30);
  });
});
