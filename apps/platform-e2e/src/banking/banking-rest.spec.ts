import { randomUUID } from 'node:crypto';
import Decimal from 'decimal.js';
import { openApiDocument } from '@trading/rest-facade-service';
import { http, openApiResponseValidator } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { patSession, scopedSession } from '../support/sessions';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const conforms = openApiResponseValidator(openApiDocument);
const [alice] = DEMO_USERS as [(typeof DEMO_USERS)[0]];
const aliceCash = DEMO_ACCOUNTS[0]!.id;
const bobCash = DEMO_ACCOUNTS[2]!.id;

/** The banking endpoints from outside over HTTP: happy paths, scopes, bad input, money movement and idempotency. */
describe('banking REST endpoints', () => {
  let p: TestPlatform;
  let writer: string;
  let reader: string;
  let accountsOnly: string;

  beforeAll(async () => {
    p = await startTestPlatform();
    writer = await patSession(p, alice.email, 'READ_WRITE');
    reader = await patSession(p, alice.email, 'READ_ONLY');
    accountsOnly = await scopedSession(p, alice.email, ['read:accounts']);
  }, 60_000);
  afterAll(() => p?.stop());

  const api = (path: string) => p.urls.api + path;
  const deposit = (body: Record<string, unknown>, headers: Record<string, string> = {}, token = writer) =>
    http('POST', api('/banking/deposit'), { token, body, headers });
  const balanceOf = async (ccy = 'USD') => (await http('GET', api(`/banking/${aliceCash}/balance/${ccy}`), { token: reader })).body;

  async function until<T>(read: () => Promise<T>, done: (t: T) => boolean, what: string): Promise<T> {
    for (let i = 0; i < 100; i++) {
      const value = await read();
      if (done(value)) return value;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  const reads = [
    { template: '/banking/{accountId}/balance', path: (id: string) => `/banking/${id}/balance` },
    { template: '/banking/{accountId}/balance/{ccy}', path: (id: string) => `/banking/${id}/balance/USD` },
    { template: '/banking/{accountId}/activity', path: (id: string) => `/banking/${id}/activity` },
    { template: '/banking/{accountId}/txn-activity', path: (id: string) => `/banking/${id}/txn-activity` },
  ];

  describe.each(reads)('GET $template', ({ template, path }) => {
    it('answers the owner per the OpenAPI document and refuses others', async () => {
      const ok = await http('GET', api(path(aliceCash)), { token: reader });
      expect(ok.status).toBe(200);
      conforms('GET', template, 200, ok.body);
      expect((await http('GET', api(path(aliceCash)))).status).toBe(401);
      expect(await http('GET', api(path(aliceCash)), { token: accountsOnly })).toMatchObject({
        status: 403,
        body: { code: 'INSUFFICIENT_SCOPE' },
      });
      expect(await http('GET', api(path(bobCash)), { token: reader })).toMatchObject({ status: 404, body: { field: 'accountId' } });
      expect(await http('GET', api(path('123')), { token: reader })).toMatchObject({ status: 400, body: { field: 'accountId' } });
    });
  });

  it("serves each domain's reads to a token holding only that domain's scope", async () => {
    const bankingOnly = await scopedSession(p, alice.email, ['read:banking']);
    const balance = await http('GET', api(`/banking/${aliceCash}/balance`), { token: bankingOnly });
    expect(balance.status).toBe(200);
    expect(await http('GET', api(`/banking/${bobCash}/balance`), { token: bankingOnly })).toMatchObject({ status: 404 });
    expect((await http('GET', api('/accounts'), { token: bankingOnly })).status).toBe(403);
    const ordersOnly = await scopedSession(p, alice.email, ['read:orders']);
    expect((await http('GET', api(`/oms/${aliceCash}/orders`), { token: ordersOnly })).status).toBe(200);
    expect((await http('GET', api(`/banking/${aliceCash}/balance`), { token: ordersOnly })).status).toBe(403);
  });

  it('enforces read:banking through GraphQL too', async () => {
    const query = `{ account(id: "${aliceCash}") { number balances { cash } } }`;
    const denied = await http('POST', p.urls.gateway, { token: accountsOnly, body: { query } });
    expect(denied.body.errors[0].extensions).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScopes: ['read:banking'] });
    const allowed = await http('POST', p.urls.gateway, { token: reader, body: { query } });
    expect(allowed.body.errors).toBeUndefined();
    expect(allowed.body.data.account.balances[0].cash).toEqual(expect.any(String));
  });

  it('validates currencies, dates, types, states and cursors naming the field', async () => {
    expect(await http('GET', api(`/banking/${aliceCash}/balance/US1`), { token: reader })).toMatchObject({
      status: 400,
      body: { field: 'ccy' },
    });
    expect(await http('GET', api(`/banking/${aliceCash}/balance/XYZ`), { token: reader })).toMatchObject({
      status: 400,
      body: { field: 'currency' },
    });
    expect(await http('GET', api(`/banking/${aliceCash}/activity?from=2026-13-01`), { token: reader })).toMatchObject({
      status: 400,
      body: { field: 'from' },
    });
    expect(await http('GET', api(`/banking/${aliceCash}/activity?type=GIFT`), { token: reader })).toMatchObject({
      status: 400,
      body: { field: 'type' },
    });
    expect(await http('GET', api(`/banking/${aliceCash}/txn-activity?state=DONE`), { token: reader })).toMatchObject({
      status: 400,
      body: { field: 'state' },
    });
    expect(await http('GET', api(`/banking/${aliceCash}/txn-activity?cursor=abc.def`), { token: reader })).toMatchObject({
      status: 400,
      body: { field: 'cursor' },
    });
  });

  it('refuses bad funding input with 400/422 naming the field, and never a 500', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ accountId: aliceCash, amount: '0', currency: 'USD' }, 'amount'],
      [{ accountId: aliceCash, amount: '-5', currency: 'USD' }, 'amount'],
      [{ accountId: aliceCash, amount: '1.001', currency: 'USD' }, 'amount'],
      [{ accountId: aliceCash, amount: 100, currency: 'USD' }, 'amount'],
      [{ accountId: aliceCash, amount: '1e3', currency: 'USD' }, 'amount'],
      [{ accountId: aliceCash, amount: '10', currency: 'XYZ' }, 'currency'],
      [{ accountId: 'nope', amount: '10', currency: 'USD' }, 'accountId'],
      [{ amount: '10', currency: 'USD' }, 'accountId'],
    ];
    for (const [body, field] of cases) {
      const res = await deposit(body);
      expect({ body, status: [400, 422].includes(res.status), field: res.body.field }).toEqual({ body, status: true, field });
    }
    expect(await deposit({ accountId: bobCash, amount: '10', currency: 'EUR' })).toMatchObject({
      status: 404,
      body: { field: 'accountId' },
    });
    const notJson = await http('POST', api('/banking/deposit'), {
      token: writer,
      body: 'amount=1',
      headers: { 'content-type': 'text/plain' },
    });
    expect(notJson.status).toBe(415);
  });

  it('GraphQL clients: an amount outside the Decimal syntax is bad user input naming the field, as a variable or a literal', async () => {
    const before = await balanceOf();
    const byVariable = (amount: unknown) =>
      http('POST', p.urls.gateway, {
        token: writer,
        body: {
          query: 'mutation($input: FundingInput!) { deposit(input: $input) { id } }',
          variables: { input: { accountId: aliceCash, amount, currency: 'USD' } },
        },
      });
    for (const amount of ['1e3', 100, ' 1', '1,5']) {
      const res = await byVariable(amount);
      expect({ amount, error: res.body.errors?.[0]?.extensions, data: res.body.data ?? null }).toEqual({
        amount,
        error: { code: 'BAD_USER_INPUT', field: 'amount' },
        data: null,
      });
    }
    const literal = await http('POST', p.urls.gateway, {
      token: writer,
      body: { query: `mutation { deposit(input: { accountId: "${aliceCash}", amount: "1e3", currency: "USD" }) { id } }` },
    });
    expect(literal.body.errors?.[0]).toMatchObject({
      message: expect.stringMatching(/Decimal must be a decimal string/),
      extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
    });
    expect(await balanceOf()).toEqual(before);
  });

  it('needs write:banking and a READ_WRITE session to move money', async () => {
    const readOnly = await deposit({ accountId: aliceCash, amount: '1', currency: 'USD' }, {}, reader);
    expect(readOnly).toMatchObject({ status: 403, body: { code: 'READ_ONLY_TOKEN' } });
    expect(readOnly.headers.get('www-authenticate')).toBe(
      'Bearer realm="trading-api", error="insufficient_scope", error_description="A READ_ONLY token may not use POST"',
    );
    const narrow = await scopedSession(p, alice.email, ['read:banking']);
    expect(await deposit({ accountId: aliceCash, amount: '1', currency: 'USD' }, {}, narrow)).toMatchObject({
      status: 403,
      body: { code: 'INSUFFICIENT_SCOPE' },
    });
    const gql = await http('POST', p.urls.gateway, {
      token: reader,
      body: { query: `mutation { deposit(input: { accountId: "${aliceCash}", amount: "1", currency: "USD" }) { id } }` },
    });
    expect(gql.body.errors[0].extensions.code).toBe('READ_ONLY_TOKEN');
  });

  it('deposits: PENDING, then cleared into cash, visible in activity with a running balance', async () => {
    const before = await balanceOf();
    const res = await deposit({ accountId: aliceCash, amount: '125.50', currency: 'USD', reference: 'e2e deposit' });
    expect(res).toMatchObject({ status: 201, body: { type: 'DEPOSIT', state: 'PENDING', amount: '125.50', currency: 'USD' } });
    conforms('POST', '/banking/deposit', 201, res.body);
    const txn = await until(
      async () =>
        (await http('GET', api(`/banking/${aliceCash}/txn-activity?type=DEPOSIT`), { token: reader })).body.transactions.find(
          (t: { id: string }) => t.id === res.body.id,
        ),
      (t) => t?.state === 'COMPLETED',
      'the deposit to clear',
    );
    expect(txn.completedAt).toEqual(expect.any(String));
    const after = await balanceOf();
    expect(new Decimal(after.cash).minus(before.cash).equals('125.5')).toBe(true);
    const activity = await http('GET', api(`/banking/${aliceCash}/activity?type=DEPOSIT&limit=1`), { token: reader });
    expect(activity.body.activity[0]).toMatchObject({ type: 'DEPOSIT', amount: '125.50', transactionId: res.body.id });
    expect(new Decimal(activity.body.activity[0].balanceAfter).equals(after.cash)).toBe(true);
  });

  it('balances show pending deposits (pendingIn) and withdrawals (pendingOut) until clearing moves them into cash', async () => {
    // A currency no other test of this file uses: nothing else is pending or clearing in it.
    const ccy = 'NOK';
    const nok = async () => {
      const res = await http('GET', api(`/banking/${aliceCash}/balance/${ccy}`), { token: reader });
      conforms('GET', '/banking/{accountId}/balance/{ccy}', 200, res.body);
      return res.body;
    };
    const before = await nok();
    expect(before).toMatchObject({ pendingIn: '0.00', pendingOut: '0.00' });

    const d = await deposit({ accountId: aliceCash, amount: '125.55', currency: ccy });
    expect(d).toMatchObject({ status: 201, body: { state: 'PENDING' } });
    // Right after the deposit: shown as pending, not yet cash (clearing takes 3 s in the platform).
    const pending = await nok();
    expect(pending).toMatchObject({ currency: ccy, pendingIn: '125.55', pendingOut: '0.00', cash: before.cash, held: before.held });
    const list = await http('GET', api(`/banking/${aliceCash}/balance`), { token: reader });
    conforms('GET', '/banking/{accountId}/balance', 200, list.body);
    expect(list.body.balances.find((b: { currency: string }) => b.currency === ccy)).toMatchObject({ pendingIn: '125.55' });
    // GraphQL clients see the same fields.
    const gql = await http('POST', p.urls.gateway, {
      token: reader,
      body: { query: `{ account(id: "${aliceCash}") { balance(currency: "${ccy}") { cash pendingIn pendingOut } } }` },
    });
    expect(gql.body.data.account.balance).toEqual({ cash: before.cash, pendingIn: '125.55', pendingOut: '0.00' });

    // The clearing worker settles it: nothing pending, the cash is up by the amount, exactly.
    const cleared = await until(nok, (b) => b.pendingIn === '0.00', 'the deposit to clear');
    expect(new Decimal(cleared.cash).minus(before.cash).equals('125.55')).toBe(true);

    // A withdrawal: pendingOut (held, still in cash) until it is paid out.
    const w = await http('POST', api('/banking/withdraw'), {
      token: writer,
      body: { accountId: aliceCash, amount: '25.05', currency: ccy },
    });
    expect(w).toMatchObject({ status: 201, body: { state: 'PENDING' } });
    expect(await nok()).toMatchObject({ pendingIn: '0.00', pendingOut: '25.05', cash: cleared.cash, held: '25.05' });
    const paid = await until(nok, (b) => b.pendingOut === '0.00', 'the withdrawal to clear');
    expect(paid).toMatchObject({ held: '0.00', pendingIn: '0.00' });
    expect(new Decimal(cleared.cash).minus(paid.cash).equals('25.05')).toBe(true);
  });

  it('withdrawals hold cash while pending, can be cancelled once, and never overdraw', async () => {
    const before = await balanceOf();
    const tooMuch = await http('POST', api('/banking/withdraw'), {
      token: writer,
      body: { accountId: aliceCash, amount: new Decimal(before.availableToWithdraw).plus(1).toFixed(2), currency: 'USD' },
    });
    expect(tooMuch).toMatchObject({ status: 422, body: { field: 'amount' } });

    const w = await http('POST', api('/banking/withdraw'), {
      token: writer,
      body: { accountId: aliceCash, amount: '40.00', currency: 'USD' },
    });
    expect(w).toMatchObject({ status: 201, body: { state: 'PENDING', type: 'WITHDRAWAL' } });
    const held = await balanceOf();
    expect(new Decimal(held.held).minus(before.held).equals(40)).toBe(true);
    expect(new Decimal(before.availableToWithdraw).minus(held.availableToWithdraw).equals(40)).toBe(true);

    const cancel = await http('POST', api('/banking/cancel-txn'), { token: writer, body: { transactionId: w.body.id } });
    expect(cancel).toMatchObject({ status: 200, body: { state: 'CANCELLED' } });
    conforms('POST', '/banking/cancel-txn', 200, cancel.body);
    expect(new Decimal((await balanceOf()).availableToWithdraw).equals(before.availableToWithdraw)).toBe(true);
    expect((await http('POST', api('/banking/cancel-txn'), { token: writer, body: { transactionId: w.body.id } })).status).toBeLessThan(
      500,
    );
    expect(await http('POST', api('/banking/cancel-txn'), { token: writer, body: { transactionId: randomUUID() } })).toMatchObject({
      status: 404,
      body: { field: 'transactionId' },
    });
  });

  it('honours Idempotency-Key: same body → first result, other body → 422, concurrent duplicates → one effect', async () => {
    const key = randomUUID();
    const body = { accountId: aliceCash, amount: '7.00', currency: 'USD' };
    const results = await Promise.all(Array.from({ length: 8 }, () => deposit(body, { 'Idempotency-Key': key })));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(results.every((r) => r.status === 201)).toBe(true);
    const other = await deposit({ ...body, amount: '8.00' }, { 'Idempotency-Key': key });
    expect(other).toMatchObject({ status: 422, body: { field: 'idempotencyKey' } });
    const list = await http('GET', api(`/banking/${aliceCash}/txn-activity?limit=100`), { token: reader });
    expect(list.body.transactions.filter((t: { id: string }) => t.id === results[0]!.body.id)).toHaveLength(1);
  });

  it('a lock held by a stalled session answers 503 "try again" after a bounded wait, books nothing, and the retry with its key books once', async () => {
    // An operator's open transaction, or a client that died mid-transaction, holds Alice's USD cash lock.
    const stalled = p.services.banking.app!.dataSource.createQueryRunner();
    await stalled.connect();
    const key = randomUUID();
    const body = { accountId: aliceCash, amount: '2.00', currency: 'USD' };
    const withdraw = () => http('POST', api('/banking/withdraw'), { token: writer, body, headers: { 'Idempotency-Key': key } });
    const before = await balanceOf();
    try {
      await stalled.query('SELECT pg_advisory_lock(hashtext($1))', [`cash:${aliceCash}:USD`]);
      const refused = await withdraw();
      expect(refused).toMatchObject({ status: 503, body: { code: 'SERVICE_UNAVAILABLE' } });
      expect(refused.headers.get('retry-after')).toBe('1');
      conforms('POST', '/banking/withdraw', 503, refused.body);
      expect(await balanceOf()).toEqual(before);
    } finally {
      await stalled.query('SELECT pg_advisory_unlock_all()');
      await stalled.release();
    }
    const retried = await withdraw();
    expect(retried).toMatchObject({ status: 201, body: { state: 'PENDING', type: 'WITHDRAWAL' } });
    expect((await withdraw()).body.id).toBe(retried.body.id);
    expect(new Decimal(before.held).plus(2).equals((await balanceOf()).held)).toBe(true);
  });

  it('lets the sandbox force a REJECTED outcome', async () => {
    const res = await deposit({ accountId: aliceCash, amount: '3.00', currency: 'USD', sandboxOutcome: 'REJECTED' });
    const txn = await until(
      async () =>
        (await http('GET', api(`/banking/${aliceCash}/txn-activity?state=REJECTED`), { token: reader })).body.transactions.find(
          (t: { id: string }) => t.id === res.body.id,
        ),
      (t) => !!t,
      'the sandbox rejection',
    );
    expect(txn.rejectReason).toEqual(expect.any(String));
  });
});
