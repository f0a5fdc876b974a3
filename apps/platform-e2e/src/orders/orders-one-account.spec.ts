import Decimal from 'decimal.js';
import { http } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { expectInvariants, ServiceDatabases, settled } from '../support/invariants';
import { recordingStatements, startOrdersPlatform, until } from '../support/orders-platform';
import { patSession } from '../support/sessions';
import type { TestPlatform } from '../support/test-platform';

const bob = DEMO_USERS[1]!;
const bobCash = DEMO_ACCOUNTS[2]!.id; // EUR

/**
 * An account's placements are serialised only where they must be (its cash lock in
 * banking, its open-order count in the OMS), and that never lets a hold overdraw. 200 limit
 * buys at once, from one token, at one account whose cash covers exactly 100 of them.
 */
describe('200 concurrent orders at one account whose cash covers 100', () => {
  let p: TestPlatform;
  let db: ServiceDatabases;
  let bobs: string;
  const api = (path: string) => `${p.urls.api}${path}`;
  const balance = async () => (await http('GET', api(`/banking/${bobCash}/balance/EUR`), { token: bobs })).body;

  beforeAll(async () => {
    // Holds are the limit alone (no commission), and the cap is not what refuses here.
    p = await startOrdersPlatform({ OMS_COMMISSION_RATE: '0', OMS_MAX_OPEN_ORDERS_PER_ACCOUNT: '1000' });
    db = new ServiceDatabases(p);
    bobs = await patSession(p, bob.email, 'READ_WRITE');
    await p.oms.feed.setPrice('SAP', '180.00');
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await p?.stop();
  });

  it('accepts exactly the covered ones and refuses the rest with 422, never overdrawing; cancelling them gives every cent back', async () => {
    const before = await balance();
    const available = new Decimal(before.availableToTrade);
    // The price that 100 orders of one share take all but less than one price of: 101 never fit.
    const limit = available.div(100).toDecimalPlaces(2, Decimal.ROUND_DOWN);
    expect(limit.gte(1)).toBe(true);
    expect(limit.times(101).gt(available)).toBe(true);

    const order = {
      accountId: bobCash,
      symbol: 'SAP',
      side: 'BUY',
      type: 'LIMIT',
      timeInForce: 'GTC',
      quantity: '1',
      limitPrice: limit.toFixed(2),
    };
    const answers = await Promise.all(Array.from({ length: 200 }, () => http('POST', api('/oms/order'), { token: bobs, body: order })));
    const byStatus = new Map<number, number>();
    for (const a of answers) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
    expect(Object.fromEntries(byStatus)).toEqual({ 201: 100, 422: 100 });
    for (const refused of answers.filter((a) => a.status === 422)) {
      expect(refused.body).toMatchObject({ code: 'UNPROCESSABLE', field: 'quantity' });
      expect(JSON.stringify(refused.body)).toMatch(/Insufficient buying power/);
    }
    const accepted = answers.filter((a) => a.status === 201).map((a) => a.body);
    expect(accepted.every((o) => o.status === 'NEW' && o.reservedAmount === limit.toFixed(2))).toBe(true);

    // Banking holds exactly the accepted ones' cash; the OMS shows exactly them working and counts them.
    const held = await balance();
    expect(held.held).toBe(new Decimal(before.held).plus(limit.times(100)).toFixed(2));
    expect(held.availableToTrade).toBe(available.minus(limit.times(100)).toFixed(2));
    const holds = await db.query('banking', "SELECT order_id FROM holds WHERE account_id = $1 AND state = 'HELD'", [bobCash]);
    expect(holds.map((h) => h.order_id).sort()).toEqual(accepted.map((o) => o.id).sort());
    const [{ open }] = await db.query('oms', "SELECT count(*)::int AS open FROM orders WHERE account_id = $1 AND status = 'NEW'", [
      bobCash,
    ]);
    expect(open).toBe(100);
    expect(await db.query('oms', 'SELECT open FROM account_open_orders WHERE account_id = $1', [bobCash])).toEqual([{ open: 100 }]);
    const rejected = await db.query('oms', "SELECT count(*)::int AS n FROM orders WHERE account_id = $1 AND status = 'REJECTED'", [
      bobCash,
    ]);
    expect(rejected).toEqual([{ n: 100 }]);

    for (const o of accepted) expect((await http('DELETE', api(`/oms/order?orderId=${o.id}`), { token: bobs })).status).toBe(200);
    await until(balance, (b) => b.availableToTrade === before.availableToTrade && b.held === before.held, 'every hold released');
    expect(await db.query('oms', 'SELECT open FROM account_open_orders WHERE account_id = $1', [bobCash])).toEqual([{ open: 0 }]);
    // Published is not yet applied: banking books each close when it reads it.
    await settled(db);
    await expectInvariants(db);
  });

  it('a plain limit buy writes to the OMS database twice: the order row (counted and capped by its trigger), then its start with its event', async () => {
    const order = { accountId: bobCash, symbol: 'SAP', side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', quantity: '1', limitPrice: '1.00' };
    const { result, statements } = await recordingStatements(p.oms.dataSource, () =>
      http('POST', api('/oms/order'), { token: bobs, body: order }),
    );
    expect(result.status).toBe(201);
    expect(result.body).toMatchObject({ status: 'NEW', reservedAmount: '1.00' });
    // Only the order's own statements touch these (the engine and relay passes read and update, never insert orders).
    expect(statements.filter((s) => /INSERT INTO orders/.test(s))).toHaveLength(1);
    expect(statements.filter((s) => /WITH working/.test(s))).toHaveLength(1);
    expect(statements.filter((s) => /open-orders|count\(\*\)/.test(s))).toEqual([]);

    // With an Idempotency-Key: the key's claim is part of the same insert, and a retry answers the same order.
    const keyed = await recordingStatements(p.oms.dataSource, () =>
      http('POST', api('/oms/order'), { token: bobs, body: order, headers: { 'idempotency-key': 'one-statement-1' } }),
    );
    expect(keyed.result.status).toBe(201);
    expect(keyed.statements.filter((s) => /order_idempotency_keys/.test(s))).toEqual([
      expect.stringMatching(/claimed AS[\s\S]*INSERT INTO orders/),
    ]);
    const retry = await http('POST', api('/oms/order'), { token: bobs, body: order, headers: { 'idempotency-key': 'one-statement-1' } });
    expect(retry.body.id).toBe(keyed.result.body.id);
    const other = await http('POST', api('/oms/order'), {
      token: bobs,
      body: { ...order, quantity: '2' },
      headers: { 'idempotency-key': 'one-statement-1' },
    });
    expect(other.body).toMatchObject({ status: 422, field: 'idempotencyKey' });
  });
});
