import { http } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { admin } from '../support/oauth-helpers';
import { fund, startOrdersPlatform, until } from '../support/orders-platform';
import { patSession } from '../support/sessions';
import { inDays, type TestPlatform } from '../support/test-platform';

const [alice, bob] = DEMO_USERS as [(typeof DEMO_USERS)[0], (typeof DEMO_USERS)[0]];
const aliceCash = DEMO_ACCOUNTS[0]!.id;
const bobCash = DEMO_ACCOUNTS[2]!.id;

/** More rows than one page may hold (100), so every list crosses the 99 → 100 digit boundary of its sequence. */
const ROWS = 105;
/** Small pages: about 16 of them per list, each cursor used once. */
const PAGE = 7;

/**
 * Every list endpoint, filled with more than 100 rows through the API, paged with
 * a small limit. The pages joined must be exactly the rows, newest first (positions: by symbol),
 * each once. The cash activity once sorted its sequence as text ('9' > '100' > '10') and lost
 * and repeated rows past the 100th entry.
 */
describe('list endpoints past 100 rows, paged with a small limit', () => {
  let p: TestPlatform;
  let aliceWriter: string;
  let bobWriter: string;
  const api = (path: string) => p.urls.api + path;

  /** Follows nextCursor from the first page to the last, returning every row of `key` in the order served. */
  async function everyPage(path: string, key: string, token: string): Promise<any[]> {
    const rows: any[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 100; pages++) {
      const sep = path.includes('?') ? '&' : '?';
      const url = api(`${path}${sep}limit=${PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      const res = await http('GET', url, { token });
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      expect(res.body[key].length).toBeLessThanOrEqual(PAGE);
      rows.push(...res.body[key]);
      cursor = res.body.nextCursor;
      if (!cursor) return rows;
    }
    throw new Error(`${path} never ended`);
  }

  beforeAll(async () => {
    // One user's admin PAT list is paged past 100 tokens: more than the default live-PAT cap (50).
    p = await startOrdersPlatform({}, { PAT_MAX_LIVE_PER_USER: '200' });
    aliceWriter = await patSession(p, alice.email, 'READ_WRITE');
    bobWriter = await patSession(p, bob.email, 'READ_WRITE');
  }, 60_000);
  afterAll(() => p?.stop());

  it('GET /banking/{accountId}/txn-activity and /activity: every deposit once, newest first, running balances exact', async () => {
    const before = await everyPage(`/banking/${bobCash}/txn-activity`, 'transactions', bobWriter);
    const activityBefore = await everyPage(`/banking/${bobCash}/activity`, 'activity', bobWriter);
    const ids: string[] = [];
    for (let i = 1; i <= ROWS; i++) {
      const res = await http('POST', api('/banking/deposit'), {
        token: bobWriter,
        body: { accountId: bobCash, amount: `${i}.00`, currency: 'USD', sandboxOutcome: 'COMPLETED' },
      });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const newestFirst = [...ids].reverse();

    const transactions = await until(
      () => everyPage(`/banking/${bobCash}/txn-activity`, 'transactions', bobWriter),
      (rows) => rows.filter((t) => ids.includes(t.id)).every((t) => t.state === 'COMPLETED'),
      'every deposit to clear',
    );
    expect(transactions.map((t) => t.id)).toEqual([...newestFirst, ...before.map((t) => t.id)]);

    const activity = await everyPage(`/banking/${bobCash}/activity`, 'activity', bobWriter);
    expect(activity.map((a) => a.transactionId)).toEqual([...newestFirst, ...activityBefore.map((a) => a.transactionId)]);
    expect(new Set(activity.map((a) => a.id)).size).toBe(activity.length);
    // Each deposit's running balance is the balance before it plus its amount, in ledger order.
    const usdBefore = activityBefore.find((a) => a.currency === 'USD')?.balanceAfter ?? '0.00';
    const added = activity.slice(0, ROWS).reverse();
    let running = Math.round(Number(usdBefore) * 100);
    added.forEach((a, i) => {
      expect(a.amount).toBe(`${i + 1}.00`);
      running += (i + 1) * 100;
      expect(Math.round(Number(a.balanceAfter) * 100)).toBe(running);
    });
  }, 90_000);

  it('GET /oms/{accountId}/orders, /trades and /accounts/{accountId}/positions: every order, fill and holding once', async () => {
    await fund(p, aliceWriter, aliceCash, '10000.00');
    const ordersBefore = await everyPage(`/oms/${aliceCash}/orders`, 'orders', aliceWriter);
    const tradesBefore = await everyPage(`/oms/${aliceCash}/trades`, 'trades', aliceWriter);
    const positionsBefore = await everyPage(`/accounts/${aliceCash}/positions`, 'positions', aliceWriter);

    // One instrument per row, so the positions list has more than 100 holdings too.
    const symbols = Array.from({ length: ROWS }, (_, i) => `ZPG${String(i).padStart(3, '0')}`);
    for (const symbol of symbols) {
      const res = await admin(p, 'POST', '/instruments', {
        symbol,
        name: `Paging ${symbol}`,
        currency: 'USD',
        tickSize: '0.01',
        price: '1.00',
      });
      expect(res.status).toBe(201);
    }
    const orderIds: string[] = [];
    for (const symbol of symbols) {
      const res = await http('POST', api('/oms/order'), {
        token: aliceWriter,
        body: { accountId: aliceCash, symbol, side: 'BUY', type: 'MARKET', timeInForce: 'DAY', quantity: '1' },
      });
      expect(res.status).toBe(201);
      orderIds.push(res.body.id);
    }

    const trades = await until(
      () => everyPage(`/oms/${aliceCash}/trades`, 'trades', aliceWriter),
      (rows) => rows.length === tradesBefore.length + ROWS,
      'every market buy to fill',
    );
    // One fill per order here, in the order placed (the engine takes market orders oldest first).
    expect(trades.slice(0, ROWS).map((t) => t.orderId)).toEqual([...orderIds].reverse());
    expect(trades.slice(ROWS).map((t) => t.id)).toEqual(tradesBefore.map((t) => t.id));
    expect(new Set(trades.map((t) => t.id)).size).toBe(trades.length);

    const orders = await everyPage(`/oms/${aliceCash}/orders`, 'orders', aliceWriter);
    expect(orders.map((o) => o.id)).toEqual([...[...orderIds].reverse(), ...ordersBefore.map((o) => o.id)]);

    const positions = await until(
      () => everyPage(`/accounts/${aliceCash}/positions`, 'positions', aliceWriter),
      (rows) => rows.length === positionsBefore.length + ROWS,
      'every fill to settle into a position',
    );
    const expectedSymbols = [...positionsBefore.map((h) => h.symbol), ...symbols].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(positions.map((h) => h.symbol)).toEqual(expectedSymbols);
  }, 120_000);

  it('GET /pat/login-activity: every login once, newest first', async () => {
    const user = (await p.auth.users.findByEmail(alice.email))!;
    const { token, pat } = await p.auth.pats.create({ userId: user.id, name: 'paging logins', access: 'READ_ONLY', expires: inDays(7) });
    for (let i = 0; i < ROWS; i++) expect((await http('POST', api('/pat/login'), { body: { token } })).status).toBe(200);
    const session = (await http('POST', api('/pat/login'), { body: { token } })).body.token as string;

    const logins = await everyPage('/pat/login-activity', 'logins', session);
    const recorded: Array<{ at: Date; token_id: string }> = await p.auth.dataSource.query(
      'SELECT at, token_id FROM pat_login_attempts WHERE user_id = $1 ORDER BY at DESC, id DESC',
      [user.id],
    );
    expect(recorded.filter((r) => r.token_id === pat.id).length).toBe(ROWS + 1);
    expect(logins.map((l) => [l.at, l.tokenId])).toEqual(recorded.map((r) => [r.at.toISOString(), r.token_id]));
  }, 60_000);

  it('GET /admin/pats: every token of a user once, newest first', async () => {
    const user = (await p.auth.users.findByEmail(bob.email))!;
    const created: string[] = [];
    for (let i = 0; i < ROWS; i++) {
      const { pat } = await p.auth.pats.create({ userId: user.id, name: `paging ${i}`, access: 'READ_ONLY', expires: inDays(7) });
      created.push(pat.id);
    }
    const res = await admin(p, 'GET', `/pats?email=${encodeURIComponent(bob.email)}`);
    expect(res.status).toBe(200);
    const listed: string[] = res.body.tokens.map((t: { tokenId: string }) => t.tokenId);
    expect(listed.slice(0, ROWS)).toEqual([...created].reverse());
    expect(new Set(listed).size).toBe(listed.length);
  }, 60_000);
});
