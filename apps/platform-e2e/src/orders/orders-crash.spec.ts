import Decimal from 'decimal.js';
import { createClient } from 'redis';
import { LIVE_EVENT_TYPES } from '@trading/events';
import { http, TEST_REDIS_URL } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { expectInvariants, negativeCash, ServiceDatabases, settled, stopStreamSpec } from '../support/invariants';
import { fund, startOrdersPlatform, until } from '../support/orders-platform';
import { patSession } from '../support/sessions';
import type { TestPlatform } from '../support/test-platform';

/** A small seeded PRNG (mulberry32): the same choices every run. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The crash test (settlement survives a consumer's death): while fills flow, banking (then accounts) is killed —
 * its port stops answering, its settlement consumer stops without acking what it was applying
 * and every session on its database is cut, so a transaction in flight rolls back — the OMS
 * keeps filling and publishing, and a new instance of the same app is started on the same
 * database, stream and consumer group. Afterwards nothing is lost and nothing applied twice:
 * every event applied exactly once by each group, the ledger balances, positions are seed plus
 * fills, no hold is left on a closed order, captured holds match their fills, cash never negative.
 */
describe('orders: settlement survives a crash of banking or accounts while fills flow', () => {
  let p: TestPlatform;
  let db: ServiceDatabases;
  let redis: ReturnType<typeof createClient>;
  const tokens: Record<string, string> = {};
  const accounts = [
    {
      id: DEMO_ACCOUNTS[0]!.id,
      user: DEMO_USERS[0]!.email,
      currency: 'USD',
      funding: '200000.00',
      symbols: ['AAPL', 'MSFT'],
      ballast: 'MSFT',
    },
    {
      id: DEMO_ACCOUNTS[1]!.id,
      user: DEMO_USERS[0]!.email,
      currency: 'USD',
      funding: '200000.00',
      symbols: ['AAPL', 'MSFT', 'TSLA'],
      ballast: 'TSLA',
    },
    { id: DEMO_ACCOUNTS[2]!.id, user: DEMO_USERS[1]!.email, currency: 'EUR', funding: '100000.00', symbols: ['SAP'], ballast: 'SAP' },
  ];
  const ticks: Record<string, string> = { AAPL: '0.01', MSFT: '0.01', TSLA: '0.01', SAP: '0.02' };
  /** Client order ids of placements answered 503: such a buy may be left ACCEPTED for a while (see expectInvariants). */
  const unanswered: string[] = [];

  beforeAll(async () => {
    // A few shares per instrument per 50 ms pass: orders fill in parts, steadily.
    p = await startOrdersPlatform({ OMS_FILL_LIQUIDITY: '3' });
    for (const a of accounts) tokens[a.user] ??= await patSession(p, a.user, 'READ_WRITE');
    db = new ServiceDatabases(p);
    redis = createClient({ url: TEST_REDIS_URL });
    await redis.connect();
    await Promise.all(accounts.map((a) => fund(p, tokens[a.user]!, a.id, a.funding, a.currency)));
  }, 60_000);
  afterAll(() => stopStreamSpec(p, db, redis));

  const api = (path: string) => p.urls.api + path;
  const count = async (name: 'banking' | 'accounts' | 'oms', sql: string) => (await db.query(name, sql))[0].n as number;
  const published = () => count('oms', 'SELECT count(*)::int AS n FROM outbox WHERE published_at IS NOT NULL');
  const trades = () => count('oms', 'SELECT count(*)::int AS n FROM trades');
  const price = async (symbol: string, move: number) => {
    const [{ last_price }] = await db.query('oms', 'SELECT last_price FROM instruments WHERE symbol = $1', [symbol]);
    return new Decimal(last_price)
      .times(1 + move)
      .div(ticks[symbol]!)
      .floor()
      .times(ticks[symbol]!)
      .toFixed();
  };

  /**
   * Each account sends marketable GTC limit orders (buys, and sells of what it holds) every
   * ~100 ms, and now and then cancels one of its working orders, until stopped. While a service
   * is down some requests fail (503): the flow keeps going.
   */
  function startFlow(seed: number) {
    const random = prng(seed);
    const statuses: Array<{ status: number; phase: string }> = [];
    let phase = 'up';
    let running = true;
    let n = 0;
    const worker = async (a: (typeof accounts)[number]) => {
      const mine: string[] = [];
      while (running) {
        const started = phase;
        const r = random();
        const symbol = a.symbols[Math.floor(random() * a.symbols.length)]!;
        let res;
        if (r < 0.12 && mine.length) {
          res = await http('DELETE', api('/oms/order'), {
            token: tokens[a.user]!,
            body: { orderId: mine.splice(Math.floor(random() * mine.length), 1)[0] },
          });
        } else {
          const side = r < 0.72 ? 'BUY' : 'SELL';
          const quantity = side === 'BUY' ? 2 + Math.floor(random() * 9) : 1 + Math.floor(random() * 4);
          const limitPrice = await price(symbol, side === 'BUY' ? 0.02 : -0.02);
          const clientOrderId = `crash-${seed}-${++n}`;
          res = await http('POST', api('/oms/order'), {
            token: tokens[a.user]!,
            body: {
              accountId: a.id,
              clientOrderId,
              symbol,
              side,
              type: 'LIMIT',
              timeInForce: 'GTC',
              quantity: String(quantity),
              limitPrice,
            },
          });
          if (res.status === 201) mine.push(res.body.id);
          if (res.status === 503) unanswered.push(clientOrderId);
        }
        // A request that saw the service down at either end (or spanned its downtime) counts as sent while down.
        statuses.push({ status: res.status, phase: started === phase ? phase : 'down' });
        await sleep(60 + Math.floor(random() * 60));
      }
    };
    const workers = Promise.all(accounts.map(worker));
    return {
      statuses,
      set phase(value: string) {
        phase = value;
      },
      async stop() {
        running = false;
        await workers;
      },
    };
  }

  /** Big buys on instruments few others trade: fills keep coming for a second or two whatever fails meanwhile. */
  async function ballast() {
    for (const a of accounts) {
      const res = await http('POST', api('/oms/order'), {
        token: tokens[a.user]!,
        body: {
          accountId: a.id,
          symbol: a.ballast,
          side: 'BUY',
          type: 'LIMIT',
          timeInForce: 'GTC',
          quantity: '90',
          limitPrice: await price(a.ballast, 0.02),
        },
      });
      expect(res.status).toBe(201);
    }
  }

  /** Cancels what is still working and waits for the relay and both consumer groups to catch up. */
  async function closeAllAndSettle() {
    for (const { id, account_id } of await db.query(
      'oms',
      "SELECT id, account_id FROM orders WHERE status IN ('NEW', 'PARTIALLY_FILLED')",
    )) {
      const a = accounts.find((x) => x.id === account_id)!;
      const res = await http('DELETE', api(`/oms/order?orderId=${id}`), { token: tokens[a.user]! });
      expect([200, 409]).toContain(res.status);
    }
    return settled(db);
  }

  /** Entries of `group` delivered and not acked: [entry id, consumer]. */
  const pendingEntries = async (group: string) =>
    (await redis.xPendingRange(p.events.stream, group, '-', '+', 1000)).map((e) => [e.id, e.consumer] as const);

  /** Whether `name` records an event of this type in its settlement_events (accounts records fills only). */
  const books = (name: 'banking' | 'accounts', type: string) =>
    !LIVE_EVENT_TYPES.includes(type) && (name === 'banking' || type === 'trade.executed');

  /**
   * Pending entries of `group` that its consumer handles, each acked on its own after a
   * transaction. Live events it acks unhandled, a whole batch in one command, which can empty
   * the pending list between a look at it and the crash.
   */
  async function handledInFlight(group: string): Promise<number> {
    const pending = await pendingEntries(group);
    if (pending.length < 2) return 0;
    const entries = await redis.xRange(p.events.stream, pending[0]![0], pending[pending.length - 1]![0]);
    const ids = new Set(pending.map(([id]) => id));
    return (entries ?? []).filter((e) => ids.has(e.id) && !LIVE_EVENT_TYPES.includes(e.message?.['type'] ?? '')).length;
  }

  async function crashWhileFilling(name: 'banking' | 'accounts', seed: number, restart: { consumer?: string; claimIdleMs?: number }) {
    const service = p.services[name];
    const group = service.group;
    const tradesBefore = await trades();
    const flow = startFlow(seed);
    const cashViolations: unknown[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        // Cash is never spent beyond what is there, at any moment (reads fail while the sessions are cut: skip those).
        const negative = await negativeCash(db).catch(() => []);
        if (negative.length) cashViolations.push(negative);
        await sleep(100);
      }
    })();

    const deadConsumer = service.app!.settlementConsumer.consumer;
    try {
      await until(trades, (n) => n >= tradesBefore + 15, 'fills to flow');
      await ballast();

      // Crash at a moment the group holds delivered-but-unacked events it handles, i.e. mid-batch.
      let crashed: Promise<void> | undefined;
      for (const deadline = Date.now() + 15_000; !crashed && Date.now() < deadline; ) {
        if ((await handledInFlight(group)) >= 2) crashed = service.crash();
        else await sleep(1);
      }
      if (!crashed) throw new Error(`${name} never had two events in flight`);
      flow.phase = 'down';
      await crashed;
      const crashedAt = Date.now();
      expect(service.app).toBeUndefined();
      const pendingAtCrash = await pendingEntries(group);
      const appliedAtCrash = await count(name, 'SELECT count(*)::int AS n FROM settlement_events');
      const publishedAtCrash = await published();

      // Down: the OMS keeps filling and publishing; nothing is applied.
      await until(
        published,
        (n) => n >= publishedAtCrash + 15 && Date.now() - crashedAt >= 1000,
        `events to be published while ${name} is down`,
      );
      const publishedWhileDown = (await published()) - publishedAtCrash;
      expect(await count(name, 'SELECT count(*)::int AS n FROM settlement_events')).toBe(appliedAtCrash);
      expect(
        (
          await http('POST', `${name === 'banking' ? p.urls.banking : p.urls.accounts}`, { body: { query: '{ __typename }' } }).catch(
            () => ({ status: 0 }),
          )
        ).status,
      ).toBe(0);

      await service.restart(restart);
      flow.phase = 'restarted';
      const tradesAtRestart = await trades();
      await until(trades, (n) => n >= tradesAtRestart + 15, `fills to flow after ${name} restarted`);
      await until(
        async () => flow.statuses.filter((s) => s.phase === 'restarted' && s.status === 201).length,
        (n) => n >= 3,
        `orders to be accepted again after ${name} restarted`,
      );
      await flow.stop();
      flow.phase = 'closing';

      const progress = await closeAllAndSettle();
      sampling = false;
      await sampler;

      // It really crashed mid-stream: events were in flight when it died, more were published
      // while it was down, and the new instance took over what the dead one left unacked.
      expect({ name, pendingAtCrash: pendingAtCrash.length > 0, publishedWhileDown: publishedWhileDown >= 15 }).toEqual({
        name,
        pendingAtCrash: true,
        publishedWhileDown: true,
      });
      expect(new Set(pendingAtCrash.map(([, consumer]) => consumer))).toEqual(new Set([deadConsumer]));
      expect(await p.events.log.pendingCount(p.events.stream, group)).toBe(0);
      const redelivered = (await redis.xRange(p.events.stream, '-', '+')) ?? [];
      const eventIdOf = new Map(redelivered.map((e) => [e.id, e.message?.['eventId'] ?? '']));
      const typeOf = new Map(redelivered.map((e) => [e.id, e.message?.['type'] ?? '']));
      const applied = new Set((await db.query(name, 'SELECT event_id::text FROM settlement_events')).map((r) => r.event_id as string));
      for (const [entryId] of pendingAtCrash) {
        if (!books(name, typeOf.get(entryId) ?? '')) continue; // accounts records fills only; order.updated is for clients' live events
        expect({ entryId, applied: applied.has(eventIdOf.get(entryId)!) }).toEqual({ entryId, applied: true });
      }

      // Orders were refused cleanly while it was down and only then; fills were partial.
      const failures = flow.statuses.filter((s) => s.status >= 500);
      expect(failures.filter((s) => s.phase !== 'down')).toEqual([]);
      expect(failures.every((s) => s.status === 503)).toBe(true);
      expect(progress.trades - tradesBefore).toBeGreaterThan(60);
      const [{ n: partial }] = await db.query(
        'oms',
        'SELECT count(*)::int AS n FROM orders WHERE id IN (SELECT order_id FROM trades GROUP BY 1 HAVING count(*) > 1)',
      );
      expect(partial).toBeGreaterThan(3);
      expect(cashViolations).toEqual([]);

      // Buys sent while banking was down stay ACCEPTED until the OMS's sweep (60 s): only those.
      const unconfirmed = await db.query('oms', "SELECT id, client_order_id FROM orders WHERE status = 'ACCEPTED'");
      expect(unconfirmed.filter((o) => !unanswered.includes(o.client_order_id))).toEqual([]);
      await expectInvariants(db, { unconfirmed: unconfirmed.map((o) => o.id as string) });
      return { deadConsumer, newConsumer: service.app!.settlementConsumer.consumer, pendingAtCrash: pendingAtCrash.length };
    } finally {
      sampling = false;
      await flow.stop();
      await sampler;
      if (!service.app) await service.restart().catch(() => undefined);
    }
  }

  it('banking killed with a second instance running: the survivor applies every event the dead one left unacked within 10 s, once', async () => {
    const service = p.services.banking;
    const survivor = await service.another({ consumer: `banking@survivor-${process.pid}` }); // the default idle threshold
    const flow = startFlow(53);
    try {
      const tradesBefore = await trades();
      await until(trades, (n) => n >= tradesBefore + 15, 'fills to flow');
      await ballast();
      const deadConsumer = service.app!.settlementConsumer.consumer;
      const inFlightOfDead = async () => {
        const pending = (await pendingEntries('banking')).filter(([, consumer]) => consumer === deadConsumer).map(([id]) => id);
        if (!pending.length) return [];
        const entries = (await redis.xRange(p.events.stream, pending[0]!, pending[pending.length - 1]!)) ?? [];
        return entries
          .filter((e) => pending.includes(e.id) && books('banking', e.message?.['type'] ?? ''))
          .map((e) => e.message!['eventId']!);
      };
      // Kill it while it holds events it was applying (delivered to it, not acked). It may ack
      // them between the look and the kill (an event takes a few milliseconds to apply): then it
      // is started again, under the same name, and killed at another moment.
      let stillPending: string[] = [];
      for (let attempt = 0; attempt < 5 && !stillPending.length; attempt++) {
        if (attempt > 0) await service.restart();
        let left: string[] = [];
        for (const deadline = Date.now() + 15_000; !left.length && Date.now() < deadline; ) {
          left = await inFlightOfDead();
          if (!left.length) await sleep(1);
        }
        expect(left.length).toBeGreaterThan(0);
        flow.phase = 'down';
        await service.crash();
        stillPending = await inFlightOfDead();
      }
      const crashedAt = Date.now();
      expect(stillPending.length).toBeGreaterThan(0);

      // Taken over: every entry the dead one held moved to the survivor (claimed), and each event it books is applied.
      const ofDead = async () => (await pendingEntries('banking')).filter(([, consumer]) => consumer === deadConsumer);
      const appliedOf = async () =>
        (await db.query('banking', 'SELECT event_id::text FROM settlement_events WHERE event_id = ANY($1::uuid[])', [stillPending])).map(
          (r) => r.event_id as string,
        );
      await until(
        async () => ({ held: (await ofDead()).length, applied: (await appliedOf()).length }),
        (s) => s.held === 0 && s.applied === stillPending.length,
        'the survivor to take over and apply what the dead instance left',
      );
      const takeoverMs = Date.now() - crashedAt;
      expect((await appliedOf()).sort()).toEqual([...stillPending].sort());
      expect({ takeoverMs, within10s: takeoverMs < 10_000 }).toMatchObject({ within10s: true });

      await service.restart(); // under its own name again (it holds nothing now): the next case kills it under that name
      flow.phase = 'restarted';
      await flow.stop();
      await closeAllAndSettle();
      // Exactly once: one settlement_events row per event (its key), and the books balance.
      const unconfirmed = await db.query('oms', "SELECT id, client_order_id FROM orders WHERE status = 'ACCEPTED'");
      await expectInvariants(db, { unconfirmed: unconfirmed.map((o) => o.id as string) });
    } finally {
      await flow.stop();
      await survivor.close();
      if (!service.app) await service.restart().catch(() => undefined);
    }
  }, 60_000);

  it('banking killed mid-stream and started again under its consumer name re-reads its pending events: nothing lost, nothing applied twice', async () => {
    const outcome = await crashWhileFilling('banking', 51, {});
    // Same name: the new instance read the dead one's pending entries as its own.
    expect(outcome.newConsumer).toBe(outcome.deadConsumer);
  }, 60_000);

  it('accounts killed mid-stream and replaced by a consumer of another name that claims the dead one’s events: nothing lost, nothing applied twice', async () => {
    const outcome = await crashWhileFilling('accounts', 52, { consumer: `accounts@replacement-${process.pid}`, claimIdleMs: 1000 });
    // Another name: the dead consumer's entries, all acked now, were claimed once idle for a second.
    expect(outcome).toMatchObject({ newConsumer: `accounts@replacement-${process.pid}` });
    expect(outcome.deadConsumer).not.toBe(outcome.newConsumer);
  }, 60_000);
});
