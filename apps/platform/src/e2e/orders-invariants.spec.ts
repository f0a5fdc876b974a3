import Decimal from 'decimal.js';
import { Pool } from 'pg';
import { withDatabaseName } from '@trading/db';
import { http, TEST_POSTGRES_URL } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_POSITIONS, DEMO_USERS } from '../demo-data';
import { startOrdersPlatform, until } from './orders-platform';
import { patSession } from './sessions';
import type { TestPlatform } from './test-platform';

/** A small seeded PRNG (mulberry32): the same run every time. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Issue 6: a randomised run of concurrent orders, cancels, deposits and withdrawals across three
 * accounts while the price feed moves, then every settlement event delivered a second time
 * (a relay that crashed after publishing). Afterwards: the ledger balances, every holding is
 * its seed plus its fills, no closed order keeps a hold, no cash book is negative, and each
 * event was applied exactly once.
 */
describe('orders: invariants after a randomised concurrent run', () => {
  let p: TestPlatform;
  const db: Record<'banking' | 'accounts' | 'oms', Pool> = {} as never;
  const tokens: Record<string, string> = {};
  const accounts = [
    { id: DEMO_ACCOUNTS[0]!.id, user: DEMO_USERS[0]!.email, currency: 'USD', symbols: ['AAPL', 'MSFT'] },
    { id: DEMO_ACCOUNTS[1]!.id, user: DEMO_USERS[0]!.email, currency: 'USD', symbols: ['AAPL', 'TSLA'] },
    { id: DEMO_ACCOUNTS[2]!.id, user: DEMO_USERS[1]!.email, currency: 'EUR', symbols: ['SAP'] },
  ];

  beforeAll(async () => {
    p = await startOrdersPlatform({ OMS_PRICE_TICK_MS: '50', OMS_PRICE_VOLATILITY: '0.004', OMS_FILL_LIQUIDITY: '7' });
    for (const a of accounts) tokens[a.user] ??= await patSession(p, a.user, 'READ_WRITE');
    for (const name of ['banking', 'accounts', 'oms'] as const) {
      db[name] = new Pool({ connectionString: withDatabaseName(TEST_POSTGRES_URL, `${p.config.PLATFORM_DB_PREFIX}${name}`), max: 3 });
    }
  }, 60_000);
  afterAll(async () => {
    for (const c of Object.values(db)) await c?.end();
    await p?.stop();
  });

  const api = (path: string) => p.urls.api + path;
  const q = async (name: keyof typeof db, sql: string, params: unknown[] = []) => (await db[name].query(sql, params)).rows;

  it('keeps every invariant', async () => {
    const random = prng(6);
    const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!;
    const placed: Array<{ id: string; user: string }> = [];
    const statuses: number[] = [];
    const lastPrice = async (symbol: string) => new Decimal((await q('oms', 'SELECT last_price FROM instruments WHERE symbol = $1', [symbol]))[0].last_price);

    for (let round = 0; round < 12; round++) {
      const ops = Array.from({ length: 6 }, async () => {
        const a = pick(accounts);
        const token = tokens[a.user]!;
        const r = random();
        if (r < 0.55) {
          const symbol = pick(a.symbols);
          const side = random() < 0.6 ? 'BUY' : 'SELL';
          const type = pick(['MARKET', 'LIMIT', 'LIMIT', 'STOP', 'STOP_LIMIT']);
          const last = await lastPrice(symbol);
          const tick = symbol === 'SAP' ? '0.02' : '0.01';
          const near = (f: number) => last.times(1 + f).div(tick).floor().times(tick).toFixed();
          const away = side === 'BUY' ? 0.004 : -0.004;
          const body: Record<string, unknown> = { accountId: a.id, symbol, side, type, quantity: String(1 + Math.floor(random() * 12)) };
          body['timeInForce'] = type === 'MARKET' ? pick(['DAY', 'IOC', 'FOK']) : type === 'LIMIT' ? pick(['DAY', 'GTC', 'IOC', 'FOK']) : pick(['DAY', 'GTC']);
          if (type === 'LIMIT' || type === 'STOP_LIMIT') body['limitPrice'] = near(random() < 0.5 ? away : -away);
          if (type === 'STOP' || type === 'STOP_LIMIT') body['stopPrice'] = near(away / 2);
          if (type === 'STOP_LIMIT') body['limitPrice'] = near(away);
          const res = await http('POST', api('/oms/order'), { token, body });
          statuses.push(res.status);
          if (res.status === 201) placed.push({ id: res.body.id, user: a.user });
        } else if (r < 0.8 && placed.length) {
          const o = pick(placed);
          statuses.push((await http('DELETE', api('/oms/order'), { token: tokens[o.user]!, body: { orderId: o.id } })).status);
        } else {
          const kind = random() < 0.6 ? 'deposit' : 'withdraw';
          const amount = kind === 'deposit' ? '500.00' : '300.00';
          statuses.push((await http('POST', api(`/banking/${kind}`), { token, body: { accountId: a.id, amount, currency: a.currency, sandboxOutcome: 'COMPLETED' } })).status);
        }
      });
      await Promise.all(ops);
      // Cash is never spent beyond what is there, at any moment.
      const negative = await q('banking', `SELECT account_id, currency, book, sum(amount) AS total FROM postings WHERE book IN ('CUSTOMER_CASH', 'CUSTOMER_HELD') GROUP BY 1, 2, 3 HAVING sum(amount) < 0`);
      expect(negative).toEqual([]);
    }
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThan(10);

    // Close what is still working, stop the market, let the relay and both consumers catch up.
    await p.oms.feed.stop();
    for (const { id } of await q('oms', "SELECT id FROM orders WHERE status IN ('NEW', 'PARTIALLY_FILLED')")) {
      const o = placed.find((x) => x.id === id)!;
      const res = await http('DELETE', api(`/oms/order?orderId=${id}`), { token: tokens[o.user]! });
      expect([200, 409]).toContain(res.status);
    }
    const caughtUp = async () => {
      const [{ n: unpublished }] = await q('oms', 'SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL');
      const [{ n: events }] = await q('oms', 'SELECT count(*)::int AS n FROM outbox');
      const [{ n: banked }] = await q('banking', 'SELECT count(*)::int AS n FROM settlement_events');
      const [{ n: trades }] = await q('oms', "SELECT count(*)::int AS n FROM outbox WHERE type = 'trade.executed'");
      const [{ n: booked }] = await q('accounts', 'SELECT count(*)::int AS n FROM settlement_events');
      return { unpublished, applied: banked === events && booked === trades, trades };
    };
    const settled = await until(caughtUp, (s) => s.unpublished === 0 && s.applied, 'settlement to catch up');
    expect(settled.trades).toBeGreaterThan(5);

    // A relay that crashed after publishing publishes everything again: nothing is applied twice.
    for (const row of await q('oms', 'SELECT event_id, type, payload, created_at FROM outbox ORDER BY seq')) {
      await p.events.log.append(p.events.stream, { eventId: row.event_id, type: row.type, payload: { ...row.payload, eventId: row.event_id, type: row.type } });
    }
    await until(
      async () => (await p.events.log.pendingCount(p.events.stream, 'banking')) + (await p.events.log.pendingCount(p.events.stream, 'accounts')),
      (n) => n === 0,
      'the duplicates to be consumed',
    );
    await new Promise((r) => setTimeout(r, 1000));
    expect(await caughtUp()).toMatchObject({ unpublished: 0, applied: true });

    // The ledger balances: each entry, each account's sub-ledger, the whole.
    expect(await q('banking', 'SELECT entry_id FROM postings GROUP BY entry_id, currency HAVING sum(amount) <> 0')).toEqual([]);
    expect(await q('banking', 'SELECT account_id FROM postings GROUP BY account_id, currency HAVING sum(amount) <> 0')).toEqual([]);
    // Each trade booked once in banking (a TRADE entry per trade).
    const [{ n: tradeEntries }] = await q('banking', "SELECT count(*)::int AS n FROM journal_entries WHERE kind = 'TRADE' AND trade_id IS NOT NULL");
    expect(tradeEntries).toBe(settled.trades);
    // No cash book below zero.
    expect(await q('banking', `SELECT account_id FROM postings WHERE book IN ('CUSTOMER_CASH', 'CUSTOMER_HELD') GROUP BY account_id, currency, book HAVING sum(amount) < 0`)).toEqual([]);

    // No hold left on a closed order, and a captured hold took exactly what the order's fills cost.
    const orders = await q('oms', 'SELECT id, status, (gross_amount + commission)::text AS cost FROM orders');
    const holds = new Map((await q('banking', 'SELECT order_id, state, coalesce(captured_amount, 0)::text AS captured FROM holds')).map((h) => [h.order_id, h]));
    for (const o of orders) {
      const hold = holds.get(o.id);
      expect({ order: o.id, open: ['NEW', 'PARTIALLY_FILLED', 'ACCEPTED'].includes(o.status) }).toEqual({ order: o.id, open: false });
      if (hold) expect({ order: o.id, state: hold.state, captured: new Decimal(hold.captured).toFixed(2) }).toEqual({ order: o.id, state: new Decimal(o.cost).isZero() ? 'RELEASED' : 'CAPTURED', captured: new Decimal(o.cost).toFixed(2) });
    }
    const [{ held }] = await q('banking', "SELECT coalesce(sum(amount), 0)::text AS held FROM postings WHERE book = 'CUSTOMER_HELD' AND entry_id IN (SELECT id FROM journal_entries WHERE hold_order_id IS NOT NULL)");
    expect(new Decimal(held).isZero()).toBe(true);

    // Every holding is its seed plus its fills.
    const fills = await q('oms', "SELECT account_id, symbol, sum(CASE WHEN side = 'BUY' THEN quantity ELSE -quantity END)::text AS net FROM trades GROUP BY 1, 2");
    for (const f of fills) {
      const seed = DEMO_POSITIONS.find((s) => s.accountId === f.account_id && s.symbol === f.symbol)?.quantity ?? '0';
      const [pos] = await q('accounts', 'SELECT quantity::text FROM positions WHERE account_id = $1 AND symbol = $2', [f.account_id, f.symbol]);
      expect({ holding: `${f.account_id}/${f.symbol}`, quantity: new Decimal(pos.quantity).toString() }).toEqual({ holding: `${f.account_id}/${f.symbol}`, quantity: new Decimal(seed).plus(f.net).toString() });
      expect(new Decimal(pos.quantity).gte(0)).toBe(true); // no shorts
    }
  }, 120_000);
});
