import Decimal from 'decimal.js';
import { http } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '../demo-data';
import { expectInvariants, negativeCash, ServiceDatabases, settled, settlementProgress } from './invariants';
import { fund, startOrdersPlatform, until } from './orders-platform';
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

/** The quoted spread the run uses (pinned): a quote's bid and ask lie half of it from the last price, in whole ticks. */
const SPREAD = '0.001';

/** The bid and ask quoted around a last price, worked out here as GET /market/quotes documents them. */
function quoteAround(last: string, tick: string): { bid: string; ask: string } {
  const half = Decimal.max(new Decimal(last).times(SPREAD).div(2).div(tick).ceil(), 1).times(tick);
  return {
    bid: Decimal.max(new Decimal(last).minus(half), Decimal.min(tick, last)).toFixed(),
    ask: new Decimal(last).plus(half).toFixed(),
  };
}

/**
 * A randomised run of concurrent orders, cancels, deposits and withdrawals across three
 * accounts while the price feed moves (brackets, OCO and trailing stops among the
 * orders, replaces and position closes among the changes), then every settlement event delivered a second time
 * (a relay that crashed after publishing). Afterwards: the ledger balances, every holding is
 * its seed plus its fills, no closed order keeps a hold, no cash book is negative, each
 * event was applied exactly once, and every fill was at the quote (buys at the ask, sells at the
 * bid) of a price its instrument had just before it.
 */
describe('orders: invariants after a randomised concurrent run', () => {
  let p: TestPlatform;
  let db: ServiceDatabases;
  const tokens: Record<string, string> = {};
  const accounts = [
    { id: DEMO_ACCOUNTS[0]!.id, user: DEMO_USERS[0]!.email, currency: 'USD', symbols: ['AAPL', 'MSFT'] },
    { id: DEMO_ACCOUNTS[1]!.id, user: DEMO_USERS[0]!.email, currency: 'USD', symbols: ['AAPL', 'TSLA'] },
    { id: DEMO_ACCOUNTS[2]!.id, user: DEMO_USERS[1]!.email, currency: 'EUR', symbols: ['SAP'] },
  ];

  beforeAll(async () => {
    p = await startOrdersPlatform({
      OMS_PRICE_TICK_MS: '50',
      OMS_PRICE_VOLATILITY: '0.004',
      OMS_FILL_LIQUIDITY: '7',
      OMS_QUOTE_SPREAD: SPREAD,
    });
    for (const a of accounts) tokens[a.user] ??= await patSession(p, a.user, 'READ_WRITE');
    db = new ServiceDatabases(p);
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await p?.stop();
  });

  const api = (path: string) => p.urls.api + path;
  const q = (name: 'banking' | 'accounts' | 'oms', sql: string, params: unknown[] = []) => db.query(name, sql, params);

  it('keeps every invariant', async () => {
    const random = prng(6);
    const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!;
    const placed: Array<{ id: string; user: string; accountId: string }> = [];
    const done = { classes: 0, trailing: 0, replaces: 0, closes: 0 };
    const statuses: number[] = [];
    const lastPrice = async (symbol: string) =>
      new Decimal((await q('oms', 'SELECT last_price FROM instruments WHERE symbol = $1', [symbol]))[0].last_price);

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
          const near = (f: number) =>
            last
              .times(1 + f)
              .div(tick)
              .floor()
              .times(tick)
              .toFixed();
          const away = side === 'BUY' ? 0.004 : -0.004;
          const body: Record<string, unknown> = { accountId: a.id, symbol, side, type, quantity: String(1 + Math.floor(random() * 12)) };
          body['timeInForce'] =
            type === 'MARKET' ? pick(['DAY', 'IOC', 'FOK']) : type === 'LIMIT' ? pick(['DAY', 'GTC', 'IOC', 'FOK']) : pick(['DAY', 'GTC']);
          if (type === 'LIMIT' || type === 'STOP_LIMIT') body['limitPrice'] = near(random() < 0.5 ? away : -away);
          if (type === 'STOP' || type === 'STOP_LIMIT') body['stopPrice'] = near(away / 2);
          if (type === 'STOP_LIMIT') body['limitPrice'] = near(away);
          // Some orders come with exits (a bracket on a buy, an OCO on a limit sell) or trail.
          const c = random();
          if (
            side === 'BUY' &&
            (type === 'MARKET' || type === 'LIMIT') &&
            c < 0.3 &&
            body['timeInForce'] !== 'IOC' &&
            body['timeInForce'] !== 'FOK'
          ) {
            body['orderClass'] = c < 0.2 ? 'BRACKET' : 'OTO';
            body['takeProfit'] = { limitPrice: near(0.006) };
            if (c < 0.2) body['stopLoss'] = { stopPrice: near(-0.006) };
          } else if (side === 'SELL' && type === 'LIMIT' && c < 0.3 && (body['timeInForce'] === 'DAY' || body['timeInForce'] === 'GTC')) {
            body['orderClass'] = 'OCO';
            body['limitPrice'] = near(0.004);
            body['stopLoss'] = { stopPrice: near(-0.004) };
          } else if ((type === 'STOP' || type === 'STOP_LIMIT') && c < 0.4) {
            body['type'] = 'TRAILING_STOP';
            delete body['stopPrice'];
            delete body['limitPrice'];
            body['trailPercent'] = '0.3';
          }
          const res = await http('POST', api('/oms/order'), { token, body });
          statuses.push(res.status);
          if (res.status === 201) placed.push({ id: res.body.id, user: a.user, accountId: a.id });
          if (res.status === 201 && body['orderClass']) done.classes++;
          if (res.status === 201 && body['type'] === 'TRAILING_STOP') done.trailing++;
        } else if (r < 0.63 && placed.length) {
          // Replace: a new total quantity (and, for limits, a new price); refusals are fine, 5xx are not.
          const o = pick(placed);
          const body: Record<string, unknown> = { accountId: o.accountId, orderId: o.id, quantity: String(1 + Math.floor(random() * 12)) };
          const res = await http('PUT', api('/oms/order'), { token: tokens[o.user]!, body });
          statuses.push(res.status);
          if (res.status === 200) placed.push({ id: res.body.id, user: o.user, accountId: o.accountId });
          if (res.status === 200) done.replaces++;
        } else if (r < 0.67) {
          // Close part or all of a position (404 when there is none, 409 when sells already cover it).
          const symbol = pick(a.symbols);
          const query = random() < 0.5 ? '?percentage=50' : '';
          const res = await http('DELETE', api(`/accounts/${a.id}/positions/${symbol}${query}`), { token });
          statuses.push(res.status);
          if (res.status === 200) placed.push({ id: res.body.id, user: a.user, accountId: a.id });
          if (res.status === 200) done.closes++;
        } else if (r < 0.8 && placed.length) {
          const o = pick(placed);
          statuses.push((await http('DELETE', api('/oms/order'), { token: tokens[o.user]!, body: { orderId: o.id } })).status);
        } else {
          const kind = random() < 0.6 ? 'deposit' : 'withdraw';
          const amount = kind === 'deposit' ? '500.00' : '300.00';
          statuses.push(
            (
              await http('POST', api(`/banking/${kind}`), {
                token,
                body: { accountId: a.id, amount, currency: a.currency, sandboxOutcome: 'COMPLETED' },
              })
            ).status,
          );
        }
      });
      await Promise.all(ops);
      // Cash is never spent beyond what is there, at any moment.
      expect(await negativeCash(db)).toEqual([]);
    }
    // The run must hold an order class (its legs then go through every invariant below). The
    // rounds run concurrently, so which orders meet enough cash or shares varies from run to run:
    // when none of their few was accepted, one bracket buy now, its cash deposited first.
    if (!done.classes) {
      const a = accounts[0]!;
      await fund(p, tokens[a.user]!, a.id, '2000.00', a.currency);
      const last = await lastPrice('AAPL');
      const at = (f: number) =>
        last
          .times(1 + f)
          .toDecimalPlaces(2, Decimal.ROUND_DOWN)
          .toFixed(2);
      const bracket = await http('POST', api('/oms/order'), {
        token: tokens[a.user]!,
        body: {
          accountId: a.id,
          symbol: 'AAPL',
          side: 'BUY',
          type: 'LIMIT',
          timeInForce: 'GTC',
          quantity: '1',
          limitPrice: at(-0.004),
          orderClass: 'BRACKET',
          takeProfit: { limitPrice: at(0.006) },
          stopLoss: { stopPrice: at(-0.006) },
        },
      });
      expect(bracket.status).toBe(201);
      placed.push({ id: bracket.body.id, user: a.user, accountId: a.id });
      done.classes++;
    }
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThan(10);
    expect(done.classes).toBeGreaterThan(0);
    expect(done.replaces).toBeGreaterThan(0);

    // Close what is still working, stop the market, let the relay and both consumers catch up.
    await p.oms.feed.stop();
    // Again until none is left: a bracket entry filling meanwhile starts its exits.
    for (let pass = 0; pass < 5; pass++) {
      const working = await q('oms', "SELECT id, account_id FROM orders WHERE status IN ('NEW', 'PARTIALLY_FILLED') ORDER BY seq");
      if (!working.length) break;
      for (const { id, account_id } of working) {
        const owner = accounts.find((x) => x.id === account_id)!;
        const res = await http('DELETE', api(`/oms/order?orderId=${id}`), { token: tokens[owner.user]! });
        expect([200, 409]).toContain(res.status);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    // Timed out: say which events banking or accounts never applied, before failing.
    const caughtUp = await settled(db).catch(async (err) => {
      const banked = new Set((await q('banking', 'SELECT event_id::text FROM settlement_events')).map((r) => r.event_id));
      const booked = new Set((await q('accounts', 'SELECT event_id::text FROM settlement_events')).map((r) => r.event_id));
      for (const row of await q(
        'oms',
        "SELECT event_id::text, type, payload FROM outbox WHERE type IN ('trade.executed', 'order.closed') ORDER BY seq",
      ))
        if (!banked.has(row.event_id) || (row.type === 'trade.executed' && !booked.has(row.event_id)))
          console.log(
            'not applied (banking, accounts):',
            row.type,
            banked.has(row.event_id),
            booked.has(row.event_id),
            JSON.stringify(row.payload),
          );
      throw err;
    });
    expect(caughtUp.trades).toBeGreaterThan(5);

    // Every fill at the quote of its side: a pass fills at the quote of the last price it read,
    // one of those the feed set just before the fill (a fill at a last price itself would match
    // only where another recent price happened to lie half a spread from it).
    const fills: Array<{ id: string; side: string; price: string; tick: string; recent: string[] }> = await q(
      'oms',
      `SELECT t.id, t.side, trim_scale(t.price)::text AS price, trim_scale(i.tick_size)::text AS tick,
              array(SELECT trim_scale(m.price)::text FROM market_ticks m WHERE m.symbol = t.symbol AND m.at <= t.executed_at
                    ORDER BY m.at DESC LIMIT 100) AS recent
       FROM trades t JOIN instruments i USING (symbol) ORDER BY t.executed_at`,
    );
    const offQuote = fills.filter(
      (f) => !f.recent.some((last) => new Decimal(quoteAround(last, f.tick)[f.side === 'BUY' ? 'ask' : 'bid']).eq(f.price)),
    );
    expect(offQuote).toEqual([]);
    expect(new Set(fills.map((f) => f.side))).toEqual(new Set(['BUY', 'SELL']));

    // A relay that crashed after publishing publishes everything again: nothing is applied twice.
    for (const row of await q('oms', 'SELECT event_id, type, payload, created_at FROM outbox ORDER BY seq')) {
      await p.events.log.append(p.events.stream, {
        eventId: row.event_id,
        type: row.type,
        payload: { ...row.payload, eventId: row.event_id, type: row.type },
      });
    }
    await until(
      async () =>
        (await p.events.log.pendingCount(p.events.stream, 'banking')) + (await p.events.log.pendingCount(p.events.stream, 'accounts')),
      (n) => n === 0,
      'the duplicates to be consumed',
    );
    await new Promise((r) => setTimeout(r, 1000));
    expect(await settlementProgress(db)).toMatchObject({ unpublished: 0, applied: true, trades: caughtUp.trades });

    // The ledger balances, each trade is booked once, no cash book is negative, no closed order
    // keeps a hold, captured holds match their fills, every holding is its seed plus its fills.
    await expectInvariants(db);
  }, 120_000);
});
