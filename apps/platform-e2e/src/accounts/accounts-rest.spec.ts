import Decimal from 'decimal.js';
import { openApiDocument } from '@trading/rest-facade-service';
import { http, openApiResponseValidator } from '@trading/testing';
import { DEMO_ACCOUNTS, DEMO_USERS } from '@trading/platform';
import { patSession, scopedSession } from '../support/sessions';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const conforms = openApiResponseValidator(openApiDocument);
const [alice, bob] = DEMO_USERS as [(typeof DEMO_USERS)[0], (typeof DEMO_USERS)[0]];
const aliceCash = DEMO_ACCOUNTS[0]!.id;
const aliceMargin = DEMO_ACCOUNTS[1]!.id;
const bobCash = DEMO_ACCOUNTS[2]!.id;

/** The accounts API from outside over HTTP: every endpoint's happy path, auth, scope, ownership and bad input. */
describe('accounts REST endpoints', () => {
  let p: TestPlatform;
  let reader: string;
  let bankingOnly: string;

  beforeAll(async () => {
    p = await startTestPlatform();
    reader = await patSession(p, alice.email, 'READ_ONLY');
    bankingOnly = await scopedSession(p, alice.email, ['read:banking']);
  }, 60_000);
  afterAll(() => p?.stop());

  const endpoints = [
    { template: '/accounts/{accountId}', path: (id: string) => `/accounts/${id}` },
    { template: '/accounts/{accountId}/positions', path: (id: string) => `/accounts/${id}/positions` },
    { template: '/accounts/{accountId}/position', path: (id: string) => `/accounts/${id}/position?symbol=AAPL` },
    { template: '/accounts/{accountId}/margin', path: (id: string) => `/accounts/${id}/margin` },
    { template: '/accounts/{accountId}/portfolios', path: (id: string) => `/accounts/${id}/portfolios` },
  ];

  describe.each(endpoints)('GET $template', ({ template, path }) => {
    it('answers the owner with a body that matches the OpenAPI document', async () => {
      const res = await http('GET', p.urls.api + path(aliceMargin), { token: reader });
      expect(res.status).toBe(200);
      conforms('GET', template, 200, res.body);
    });
    it('refuses no token (401), a token without read:accounts (403), and hides other users’ accounts (404)', async () => {
      const none = await http('GET', p.urls.api + path(aliceMargin));
      expect(none.status).toBe(401);
      conforms('GET', template, 401, none.body);
      const scoped = await http('GET', p.urls.api + path(aliceMargin), { token: bankingOnly });
      expect(scoped).toMatchObject({ status: 403, body: { code: 'INSUFFICIENT_SCOPE' } });
      const other = await http('GET', p.urls.api + path(bobCash), { token: reader });
      expect(other).toMatchObject({ status: 404, body: { code: 'NOT_FOUND', field: 'accountId' } });
      const malformed = await http('GET', p.urls.api + path('not-an-id'), { token: reader });
      expect(malformed).toMatchObject({ status: 400, body: { field: 'accountId' } });
    });
  });

  it('pages positions with opaque cursors and refuses tampered cursors and bad limits', async () => {
    const first = await http('GET', `${p.urls.api}/accounts/${aliceMargin}/positions?limit=1`, { token: reader });
    expect(first.body.positions).toHaveLength(1);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await http(
      'GET',
      `${p.urls.api}/accounts/${aliceMargin}/positions?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`,
      { token: reader },
    );
    expect(second.body.positions[0].symbol > first.body.positions[0].symbol).toBe(true);
    const tampered = first.body.nextCursor.replace(/^./, (c: string) => (c === 'A' ? 'B' : 'A'));
    expect(
      await http('GET', `${p.urls.api}/accounts/${aliceMargin}/positions?cursor=${encodeURIComponent(tampered)}`, { token: reader }),
    ).toMatchObject({ status: 400, body: { field: 'cursor' } });
    for (const limit of ['0', '101', 'abc']) {
      expect(await http('GET', `${p.urls.api}/accounts/${aliceMargin}/positions?limit=${limit}`, { token: reader })).toMatchObject({
        status: 400,
        body: { field: 'limit' },
      });
    }
  });

  it('values a position exactly and answers 404 for a symbol not held, 400 without one', async () => {
    const aapl = await http('GET', `${p.urls.api}/accounts/${aliceMargin}/position?symbol=aapl`, { token: reader });
    expect(aapl.body).toMatchObject({ symbol: 'AAPL', quantity: '10' });
    expect(new Decimal(aapl.body.marketValue).equals(new Decimal(aapl.body.quantity).times(aapl.body.marketPrice))).toBe(true);
    expect(new Decimal(aapl.body.unrealizedPnl).equals(new Decimal(aapl.body.marketValue).minus(aapl.body.costBasis))).toBe(true);
    expect(await http('GET', `${p.urls.api}/accounts/${aliceMargin}/position?symbol=TSLA`, { token: reader })).toMatchObject({
      status: 404,
      body: { field: 'symbol' },
    });
    expect(await http('GET', `${p.urls.api}/accounts/${aliceMargin}/position`, { token: reader })).toMatchObject({
      status: 400,
      body: { field: 'symbol' },
    });
  });

  it('computes margin from positions and banking cash consistently', async () => {
    const { body } = await http('GET', `${p.urls.api}/accounts/${aliceMargin}/margin`, { token: reader });
    const t = body.total;
    expect(body).toMatchObject({ accountType: 'MARGIN', baseCurrency: 'USD' });
    expect(new Decimal(t.equity).equals(new Decimal(t.cash).plus(t.marketValue))).toBe(true);
    expect(new Decimal(t.excessLiquidity).equals(new Decimal(t.equity).minus(t.maintenanceRequirement))).toBe(true);
    expect(new Decimal(t.initialRequirement).gte(t.maintenanceRequirement)).toBe(true);
    expect(new Decimal(t.cash).equals('25000')).toBe(true);
  });

  it('summarises portfolios whose allocations add up to 100%', async () => {
    const { body } = await http('GET', `${p.urls.api}/accounts/${aliceMargin}/portfolios`, { token: reader });
    const total = body.portfolios.reduce((sum: Decimal, x: { allocationPercent: string }) => sum.plus(x.allocationPercent), new Decimal(0));
    expect(total.minus(100).abs().lte('0.05')).toBe(true);
  });

  describe('PATCH /accounts/{accountId}: account settings', () => {
    let writer: string;
    const patch = (body: unknown, token = writer, id = aliceCash) => http('PATCH', `${p.urls.api}/accounts/${id}`, { token, body });
    const read = async (id = aliceCash) => (await http('GET', `${p.urls.api}/accounts/${id}`, { token: reader })).body;

    beforeAll(async () => {
      writer = await patSession(p, alice.email, 'READ_WRITE');
    });
    afterAll(async () => {
      await patch({ nickname: null, tradeConfirmationEmails: true });
    });

    it('changes the nickname (trimmed) and trade confirmation emails; the account reads show them; null clears the nickname', async () => {
      expect(await read()).toMatchObject({ id: aliceCash, nickname: null, tradeConfirmationEmails: true });
      const res = await patch({ nickname: '  Day trading ', tradeConfirmationEmails: false });
      expect(res.status).toBe(200);
      conforms('PATCH', '/accounts/{accountId}', 200, res.body);
      expect(res.body).toEqual({ accountId: aliceCash, nickname: 'Day trading', tradeConfirmationEmails: false });
      const one = await read();
      conforms('GET', '/accounts/{accountId}', 200, one);
      expect(one).toEqual({
        id: aliceCash,
        number: 'DU1000001',
        type: 'CASH',
        status: 'ACTIVE',
        baseCurrency: 'USD',
        createdAt: expect.any(String),
        nickname: 'Day trading',
        tradeConfirmationEmails: false,
      });
      const list = await http('GET', `${p.urls.api}/accounts`, { token: reader });
      conforms('GET', '/accounts', 200, list.body);
      expect(list.body.accounts.map((a: { id: string; nickname: string | null }) => [a.id, a.nickname])).toEqual([
        [aliceCash, 'Day trading'],
        [aliceMargin, null],
      ]);
      // A field left out keeps its value.
      expect((await patch({ nickname: null })).body).toEqual({ accountId: aliceCash, nickname: null, tradeConfirmationEmails: false });
      expect(await read()).toMatchObject({ nickname: null, tradeConfirmationEmails: false });
    });

    it('refuses an unknown field, a wrong type and a bad value with 400 naming the field, and changes nothing', async () => {
      await patch({ nickname: 'Kept' });
      for (const [body, field] of [
        [{ nickname: 'x', colour: 'blue' }, 'colour'],
        [{ tradeConfirmationEmails: 'yes' }, 'tradeConfirmationEmails'],
        [{ tradeConfirmationEmails: null }, 'tradeConfirmationEmails'],
        [{ nickname: 42 }, 'nickname'],
        [{ nickname: ' '.repeat(3) }, 'nickname'],
        [{ nickname: 'n'.repeat(65) }, 'nickname'],
        [{}, 'body'],
        [['nickname'], 'body'],
      ] as const) {
        const res = await patch(body);
        expect({ body, status: res.status, code: res.body.code, field: res.body.field }).toEqual({
          body,
          status: 400,
          code: 'BAD_USER_INPUT',
          field,
        });
        conforms('PATCH', '/accounts/{accountId}', 400, res.body);
      }
      const text = await http('PATCH', `${p.urls.api}/accounts/${aliceCash}`, {
        token: writer,
        body: 'nickname=x',
        headers: { 'content-type': 'text/plain' },
      });
      expect(text).toMatchObject({ status: 415, body: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
      expect(await read()).toMatchObject({ nickname: 'Kept' });
    });

    it("answers 404 for another user's account and 400 for a malformed id", async () => {
      const other = await patch({ nickname: 'Not mine' }, writer, bobCash);
      expect(other).toMatchObject({ status: 404, body: { code: 'NOT_FOUND', field: 'accountId' } });
      conforms('PATCH', '/accounts/{accountId}', 404, other.body);
      const bobs = await http('GET', `${p.urls.api}/accounts/${bobCash}`, { token: await patSession(p, bob.email, 'READ_ONLY') });
      expect(bobs.body).toMatchObject({ nickname: null });
      expect(await patch({ nickname: 'x' }, writer, 'not-an-id')).toMatchObject({ status: 400, body: { field: 'accountId' } });
    });

    it('refuses a READ_ONLY PAT (403 READ_ONLY_TOKEN) and a vendor token without write:accounts (403); write:accounts alone is enough', async () => {
      expect(await patch({ nickname: 'Read only' }, reader)).toMatchObject({ status: 403, body: { code: 'READ_ONLY_TOKEN' } });
      const vendorReader = await scopedSession(p, alice.email, ['read:accounts', 'read:orders', 'write:orders']);
      const refused = await patch({ nickname: 'Vendor' }, vendorReader);
      expect(refused).toMatchObject({ status: 403, body: { code: 'INSUFFICIENT_SCOPE' } });
      conforms('PATCH', '/accounts/{accountId}', 403, refused.body);
      expect(await patch({ nickname: 'x' })).toMatchObject({ status: 200 }); // the writer still may
      const vendorWriter = await scopedSession(p, alice.email, ['write:accounts']);
      expect((await patch({ nickname: 'By vendor' }, vendorWriter)).body).toMatchObject({ nickname: 'By vendor' });
      // …but reading the account back needs read:accounts.
      expect(await http('GET', `${p.urls.api}/accounts/${aliceCash}`, { token: vendorWriter })).toMatchObject({ status: 403 });
      expect(await http('PATCH', `${p.urls.api}/accounts/${aliceCash}`, { body: { nickname: 'x' } })).toMatchObject({ status: 401 });
    });
  });

  it('answers one GraphQL query spanning accounts, banking and oms', async () => {
    const res = await http('POST', p.urls.gateway, {
      token: reader,
      body: {
        query: `{ account(id: "${aliceMargin}") { number positions { nodes { symbol marketValue } } balances { currency cash availableToWithdraw } margin { total { buyingPower } } orders { nodes { id } } } }`,
      },
    });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.account).toMatchObject({ number: 'DU1000002', orders: { nodes: [] } });
    expect(res.body.data.account.positions.nodes.length).toBeGreaterThan(0);
    expect(res.body.data.account.balances[0]).toMatchObject({ currency: 'USD' });
  });
});
