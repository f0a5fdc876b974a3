import { createHash, randomUUID } from 'node:crypto';
import { http } from '@trading/testing';
import { DashboardClient, newUser, utcDate } from '../support/pat-helpers';
import { inDays, startTestPlatform, type TestPlatform } from '../support/test-platform';

const ORDER_BUDGET = 5;
const TOKEN_BUDGET = 20;
const USER_BUDGET = 30;
const USER_ORDER_BUDGET = 8;

/**
 * Attacks on the edges' budgets (review F1, F2, F13): a path spelling, aliases, persisted
 * queries or more tokens must not buy more order placements or requests than the budgets say.
 */
describe('API budgets cannot be multiplied', () => {
  let p: TestPlatform;

  beforeAll(async () => {
    p = await startTestPlatform({
      API_RATE_LIMIT_PER_MINUTE: String(TOKEN_BUDGET),
      API_ORDER_RATE_LIMIT_PER_MINUTE: String(ORDER_BUDGET),
      API_USER_RATE_LIMIT_PER_MINUTE: String(USER_BUDGET),
      API_USER_ORDER_RATE_LIMIT_PER_MINUTE: String(USER_ORDER_BUDGET),
    });
  }, 60_000);
  afterAll(() => p?.stop());

  /** A new user (so no test shares a budget with another) and one PAT session of theirs. */
  async function trader() {
    const user = await newUser(p);
    return { user, token: await session(user.id) };
  }
  async function session(userId: string) {
    const { token } = await p.auth.pats.create({ userId, name: `budgets ${randomUUID()}`, access: 'READ_WRITE', expires: inDays(7) });
    const res = await http('POST', `${p.urls.api}/pat/login`, { body: { token } });
    expect(res.status).toBe(200);
    return res.body.token as string;
  }

  const ORDER = { accountId: randomUUID(), symbol: 'AAPL', side: 'BUY', type: 'MARKET', timeInForce: 'DAY', quantity: '1' };
  const placeOrders = (count: number) =>
    `mutation Burst($input: OrderInput!) { ${Array.from({ length: count }, (_, i) => `o${i}: placeOrder(input: $input) { id }`).join(' ')} }`;
  const gql = (token: string, body: unknown) => http('POST', p.urls.gateway, { token, body });
  const codeOf = (res: { body: any }) => res.body?.errors?.[0]?.extensions?.code as string | undefined;

  describe('F1: the REST order budget is charged by the route, whatever the spelling', () => {
    it.each(['/oms/order/', '/OMS/Order', '/oms/ORDER/', '//oms/order', '/oms//order', '/oms/order//'])(
      'attack: POST %s is charged like /oms/order',
      async (spelling) => {
        const { token } = await trader();
        const statuses: number[] = [];
        for (let i = 0; i <= ORDER_BUDGET; i++)
          statuses.push((await http('POST', `${p.urls.api}${spelling}`, { token, body: { symbol: 'AAPL' } })).status);
        // Either the spelling never reaches placement (404), or each attempt costs one order.
        if (statuses.every((s) => s === 404)) return;
        expect(statuses.slice(0, ORDER_BUDGET).every((s) => s !== 429)).toBe(true); // refused for the body, but counted
        expect(statuses[ORDER_BUDGET]).toBe(429);
      },
    );

    it('attack: alternating spellings share one budget', async () => {
      const { token } = await trader();
      const spellings = ['/oms/order', '/oms/order/', '/oms/order', '/oms/order/', '/oms/order', '/oms/order/'];
      const statuses = [];
      for (const s of spellings) statuses.push((await http('POST', `${p.urls.api}${s}`, { token, body: { symbol: 'AAPL' } })).status);
      expect(statuses.slice(0, ORDER_BUDGET).every((s) => s === 400)).toBe(true);
      expect(statuses[ORDER_BUDGET]).toBe(429);
      // The token's other calls go on: only the order budget is spent.
      expect((await http('GET', `${p.urls.api}/accounts`, { token })).status).toBe(200);
    });
  });

  describe('F2: the gateway charges every placeOrder it would run', () => {
    it('attack: 10 aliased placeOrder fields are refused whole with a budget of 5; 5 fit', async () => {
      const { token } = await trader();
      const refused = await gql(token, { query: placeOrders(10), variables: { input: ORDER } });
      expect(refused.status).toBe(429);
      expect(codeOf(refused)).toBe('RATE_LIMITED');
      expect(refused.body.data ?? null).toBeNull();
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      // Refusing it cost nothing: five still fit, and then the sixth does not.
      const five = await gql(token, { query: placeOrders(5), variables: { input: ORDER } });
      expect(five.status).toBe(200);
      expect(five.body.errors.map((e: any) => e.extensions.code)).not.toContain('RATE_LIMITED');
      expect(five.headers.get('ratelimit-remaining')).toBe('0');
      const sixth = await gql(token, { query: placeOrders(1), variables: { input: ORDER } });
      expect(sixth.status).toBe(429);
    });

    it('attack: placeOrder hidden in fragments (named and inline) is counted too', async () => {
      const { token } = await trader();
      const query = `mutation Hidden($input: OrderInput!) { ...A ... on Mutation { c: placeOrder(input: $input) { id } d: placeOrder(input: $input) { id } } }
        fragment A on Mutation { a: placeOrder(input: $input) { id } b: placeOrder(input: $input) { id } ...B }
        fragment B on Mutation { e: placeOrder(input: $input) { id } f: placeOrder(input: $input) { id } }`;
      const refused = await gql(token, { query, variables: { input: ORDER } });
      expect(refused.status).toBe(429);
      expect(codeOf(refused)).toBe('RATE_LIMITED');
    });

    it('attack: an Automatic Persisted Query (hash only) is charged like the text', async () => {
      const { token } = await trader();
      const query = placeOrders(1);
      const persistedQuery = { version: 1, sha256Hash: createHash('sha256').update(query).digest('hex') };
      const registered = await gql(token, { query, variables: { input: ORDER }, extensions: { persistedQuery } });
      expect(registered.status).toBe(200);
      const statuses = [];
      for (let i = 0; i < ORDER_BUDGET; i++)
        statuses.push((await gql(token, { variables: { input: ORDER }, extensions: { persistedQuery } })).status);
      expect(statuses.slice(0, ORDER_BUDGET - 1)).toEqual(Array(ORDER_BUDGET - 1).fill(200));
      expect(statuses[ORDER_BUDGET - 1]).toBe(429);
    });

    it('an unknown persisted-query hash answers PERSISTED_QUERY_NOT_FOUND (the client then sends the text)', async () => {
      const { token } = await trader();
      const res = await gql(token, { extensions: { persistedQuery: { version: 1, sha256Hash: 'ab'.repeat(32) } } });
      expect(codeOf(res)).toBe('PERSISTED_QUERY_NOT_FOUND');
      expect(res.body.errors[0].message).toMatch(/PersistedQueryNotFound/);
    });

    it('a batched request (JSON array) is refused 400 with a clear code', async () => {
      const { token } = await trader();
      const res = await gql(token, [{ query: '{ accounts { id } }' }, { query: '{ accounts { id } }' }]);
      expect(res.status).toBe(400);
      expect(codeOf(res)).toBe('BATCHING_NOT_SUPPORTED');
      expect(res.body.errors[0].message).toMatch(/one operation per request/);
    });

    it('mutations without placeOrder and queries cost no order', async () => {
      const { token } = await trader();
      for (let i = 0; i < ORDER_BUDGET + 1; i++) {
        const res = await gql(token, { query: '{ accounts { id } }' });
        expect(res.status).toBe(200);
      }
      const res = await gql(token, { query: placeOrders(ORDER_BUDGET), variables: { input: ORDER } });
      expect(res.status).toBe(200);
    });
  });

  describe('F13: budgets per user, and a cap on live PATs', () => {
    it("attack: more PATs do not buy more requests: the user's budget spans all of them, at both edges", async () => {
      const { user } = await trader();
      const tokens = [await session(user.id), await session(user.id), await session(user.id)];
      const statuses: number[] = [];
      for (const token of tokens)
        for (let i = 0; i < USER_BUDGET / 3; i++) statuses.push((await http('GET', `${p.urls.api}/accounts`, { token })).status);
      expect(statuses.every((s) => s === 200)).toBe(true);
      const fourth = await session(user.id);
      const refused = await http('GET', `${p.urls.api}/accounts`, { token: fourth });
      expect(refused).toMatchObject({ status: 429, body: { code: 'RATE_LIMITED' } });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await gql(fourth, { query: '{ accounts { id } }' })).status).toBe(429);
      // Another user is not affected.
      const other = await trader();
      expect((await http('GET', `${p.urls.api}/accounts`, { token: other.token })).status).toBe(200);
    });

    it("a single token flooding past its own budget cannot spend its user's budget (the other tokens go on)", async () => {
      const { user, token: flooder } = await trader();
      const statuses: number[] = [];
      for (let i = 0; i < TOKEN_BUDGET + 15; i++) statuses.push((await http('GET', `${p.urls.api}/accounts`, { token: flooder })).status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(TOKEN_BUDGET);
      const honest = await session(user.id);
      for (let i = 0; i < USER_BUDGET - TOKEN_BUDGET; i++)
        expect((await http('GET', `${p.urls.api}/accounts`, { token: honest })).status).toBe(200);
    });

    it('attack: more PATs do not buy more order placements', async () => {
      const { user, token: first } = await trader();
      const second = await session(user.id);
      const place = (token: string) => http('POST', `${p.urls.api}/oms/order`, { token, body: { symbol: 'AAPL' } });
      const statuses: number[] = [];
      for (let i = 0; i < ORDER_BUDGET; i++) statuses.push((await place(first)).status);
      for (let i = 0; i < USER_ORDER_BUDGET - ORDER_BUDGET; i++) statuses.push((await place(second)).status);
      expect(statuses.every((s) => s === 400)).toBe(true);
      expect((await place(second)).status).toBe(429);
      // At the gateway too, by the same user's third token.
      const third = await session(user.id);
      expect((await gql(third, { query: placeOrders(1), variables: { input: ORDER } })).status).toBe(429);
    });

    it('attack: the 51st live PAT is refused (admin API, dashboard), and after revoking one a new one can be made', async () => {
      const user = await newUser(p);
      for (let i = 0; i < 50; i++) await p.auth.pats.create({ userId: user.id, name: `t${i}`, access: 'READ_ONLY', expires: inDays(7) });
      const viaAdmin = await http('POST', `${p.urls.adminApi}/admin/pats`, {
        token: p.adminToken,
        body: { email: user.email, name: 'one too many', scope: 'READ_ONLY', expires: inDays(5) },
      });
      expect(viaAdmin).toMatchObject({ status: 422, body: { code: 'PAT_LIMIT_REACHED', field: 'tokens' } });

      const dashboard = new DashboardClient(p.urls.login);
      expect((await dashboard.signIn(user.email, user.password)).status).toBe(303);
      const viaDashboard = await dashboard.createToken({ name: 'one too many', expires: utcDate(5) });
      expect(viaDashboard.status).toBe(422);
      expect(viaDashboard.token).toBeUndefined();
      expect(viaDashboard.body).toMatch(/You already have 50 active tokens, the most allowed/);
      const [{ n }] = await p.auth.dataSource.query('SELECT count(*)::int AS n FROM personal_access_tokens WHERE user_id = $1', [user.id]);
      expect(n).toBe(50);

      const [oldest] = await p.auth.pats.listForUser(user.id);
      await p.auth.pats.revoke(user.id, oldest!.id);
      const again = await dashboard.createToken({ name: 'after revoking one', expires: utcDate(5) });
      expect(again.status).toBe(303); // post/redirect/get to the page showing it
      expect(again.token).toBeTruthy();
    });

    it('expired and revoked PATs do not count; concurrent creation cannot overshoot the cap', async () => {
      const user = await newUser(p);
      const made = [];
      for (let i = 0; i < 48; i++)
        made.push((await p.auth.pats.create({ userId: user.id, name: `t${i}`, access: 'READ_ONLY', expires: inDays(7) })).pat);
      // Two expired yesterday, one revoked: 45 live.
      await p.auth.dataSource.query(`UPDATE personal_access_tokens SET expires_at = now() - interval '1 day' WHERE id = ANY($1)`, [
        [made[0]!.id, made[1]!.id],
      ]);
      await p.auth.pats.revoke(user.id, made[2]!.id);
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          http('POST', `${p.urls.adminApi}/admin/pats`, {
            token: p.adminToken,
            body: { email: user.email, name: `race ${i}`, scope: 'READ_ONLY', expires: inDays(5) },
          }),
        ),
      );
      expect(answers.filter((a) => a.status === 201)).toHaveLength(5);
      expect(answers.filter((a) => a.status === 422)).toHaveLength(5);
    });
  });
});
