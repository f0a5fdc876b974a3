import { http } from '@trading/testing';
import { DEMO_USERS } from '@trading/platform';
import { extraFacade, newUser } from '../support/pat-helpers';
import { patSession, scopedSession } from '../support/sessions';
import { startTestPlatform, type TestPlatform } from '../support/test-platform';

const [alice, bob] = DEMO_USERS as [(typeof DEMO_USERS)[0], (typeof DEMO_USERS)[0]];

/** API limits: one caller's volume never costs another caller anything. */
describe('API request limits at the edges', () => {
  let p: TestPlatform;
  let behindProxy: Awaited<ReturnType<typeof extraFacade>>;

  beforeAll(async () => {
    p = await startTestPlatform({
      API_RATE_LIMIT_PER_MINUTE: '6',
      API_ORDER_RATE_LIMIT_PER_MINUTE: '2',
      API_ADDRESS_RATE_LIMIT_PER_MINUTE: '40',
      API_APP_RATE_LIMIT_PER_MINUTE: '8',
    });
    // A facade behind a trusted load balancer, so tests can speak from several client addresses.
    behindProxy = await extraFacade(p, ['loopback']);
  });
  afterAll(async () => {
    await behindProxy?.close();
    await p?.stop();
  });

  const from = (ip: string) => ({ 'x-forwarded-for': ip });

  it("abuse: one token's flood is refused with 429 and Retry-After, while another user's token goes on", async () => {
    const flooder = await patSession(p, alice.email, 'READ_ONLY');
    const other = await patSession(p, bob.email, 'READ_ONLY');
    const answers = [];
    for (let i = 0; i < 7; i++)
      answers.push(await http('GET', `${behindProxy.api}/accounts`, { token: flooder, headers: from('198.51.100.10') }));
    expect(answers.slice(0, 6).map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(answers[0]!.headers.get('ratelimit-limit')).toBeTruthy();
    const refused = answers[6]!;
    expect(refused).toMatchObject({ status: 429, body: { code: 'RATE_LIMITED', status: 429 } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    // The answer names the budget that refused it: this token's own.
    expect(refused.headers.get('x-ratelimit-budget')).toBe('token');
    expect(refused.headers.get('ratelimit-policy')).toBe('"token";q=6;w=60');
    expect(refused.body.budget).toBe('token');
    // The budget is the token's, at both edges: the gateway refuses it too.
    const viaGateway = await http('POST', p.urls.gateway, { token: flooder, body: { query: '{ accounts { id } }' } });
    expect(viaGateway.status).toBe(429);
    expect(viaGateway.body.errors[0].extensions.code).toBe('RATE_LIMITED');
    // Bob, from the same address, is not affected.
    expect((await http('GET', `${behindProxy.api}/accounts`, { token: other, headers: from('198.51.100.10') })).status).toBe(200);
  });

  it('abuse: order placement has its own tighter budget within the token', async () => {
    const trader = await patSession(p, bob.email, 'READ_WRITE');
    const place = () =>
      http('POST', `${behindProxy.api}/oms/order`, { token: trader, headers: from('198.51.100.20'), body: { symbol: 'AAPL' } });
    const statuses = [(await place()).status, (await place()).status, (await place()).status];
    expect(statuses.slice(0, 2).every((s) => s !== 429)).toBe(true); // refused for their bad body, but counted
    expect(statuses[2]).toBe(429);
    expect((await http('GET', `${behindProxy.api}/accounts`, { token: trader, headers: from('198.51.100.20') })).status).toBe(200);
  });

  it("OPTIONS spends the token's request budget like any call, never the order budget: asking cannot stop a placement", async () => {
    const user = await newUser(p);
    const asking = await patSession(p, user.email, 'READ_WRITE');
    const options = () => http('OPTIONS', `${behindProxy.api}/oms/order`, { token: asking, headers: from('198.51.100.30') });
    const place = () =>
      http('POST', `${behindProxy.api}/oms/order`, { token: asking, headers: from('198.51.100.30'), body: { symbol: 'AAPL' } });
    expect([(await options()).status, (await options()).status, (await options()).status]).toEqual([204, 204, 204]);
    // The order budget (2) is whole after three OPTIONS: two placements are let through (refused for their body), the third is not.
    const placed = [(await place()).status, (await place()).status];
    expect(placed.every((s) => s !== 429)).toBe(true);
    const third = await place();
    expect([third.status, third.body.budget]).toEqual([429, 'orders']);
    // A flood of OPTIONS is counted: the token's budget (6) ends it like any other call.
    const another = await patSession(p, user.email, 'READ_ONLY');
    const answers = [];
    for (let i = 0; i < 7; i++)
      answers.push(await http('OPTIONS', `${behindProxy.api}/accounts`, { token: another, headers: from('198.51.100.31') }));
    expect(answers.map((r) => r.status)).toEqual([204, 204, 204, 204, 204, 204, 429]);
    expect(answers[6]!.body.budget).toBe('token');
  });

  it('abuse: one address flooding without a token is refused; another address is not', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 41; i++)
      statuses.push((await http('GET', `${behindProxy.api}/accounts`, { headers: from('203.0.113.66') })).status);
    expect(statuses.slice(0, 40).every((s) => s === 401)).toBe(true);
    expect(statuses[40]).toBe(429);
    const refused = await http('GET', `${behindProxy.api}/accounts`, { headers: from('203.0.113.66') });
    expect([refused.status, refused.headers.get('x-ratelimit-budget')]).toEqual([429, 'address']);
    expect((await http('GET', `${behindProxy.api}/accounts`, { headers: from('203.0.113.67') })).status).toBe(401);
  });

  it('a vendor backend calling for many users from one address is never limited by that address', async () => {
    // 30 users behind one egress address, 4 requests each: 120 requests, three times the address budget (40).
    const sessions = await Promise.all(Array.from({ length: 30 }, async () => patSession(p, (await newUser(p)).email, 'READ_ONLY')));
    const statuses: number[] = [];
    for (let round = 0; round < 4; round++)
      statuses.push(
        ...(await Promise.all(
          sessions.map(
            async (token) => (await http('GET', `${behindProxy.api}/accounts`, { token, headers: from('198.51.100.77') })).status,
          ),
        )),
      );
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    // A flood of tokens that fail is still an unauthenticated flood: refused by address.
    const forged: number[] = [];
    for (let i = 0; i < 41; i++)
      forged.push((await http('GET', `${behindProxy.api}/accounts`, { token: 'not-a-token', headers: from('198.51.100.78') })).status);
    expect(forged.slice(0, 40).every((s) => s === 401)).toBe(true);
    expect(forged[40]).toBe(429);
  }, 60_000);

  it("a vendor app's users share the app's budget (API_APP_RATE_LIMIT_PER_MINUTE); other callers are not affected", async () => {
    const [one, two] = [await newUser(p), await newUser(p)];
    const app = 'e2e-busy-vendor';
    const tokens = [await scopedSession(p, one.email, ['read:accounts'], app), await scopedSession(p, two.email, ['read:accounts'], app)];
    const answers = [];
    for (let i = 0; i < 5; i++) for (const token of tokens) answers.push(await http('GET', `${p.urls.api}/accounts`, { token }));
    const statuses = answers.map((r) => r.status);
    expect(statuses.slice(0, 8)).toEqual(Array(8).fill(200)); // each grant is within its own 6
    expect(statuses.slice(8)).toEqual([429, 429]);
    expect(answers[9]!.headers.get('x-ratelimit-budget')).toBe('app'); // the app's budget, not the token's, refused it
    expect(answers[9]!.headers.get('ratelimit-policy')).toBe('"app";q=8;w=60');
    expect((await http('GET', `${p.urls.api}/accounts`, { token: await patSession(p, alice.email, 'READ_ONLY') })).status).toBe(200);
  }, 30_000);

  it('abuse: a 1,000-alias query and a body over 64 KB are refused at the gateway before they run', async () => {
    const token = await patSession(p, alice.email, 'READ_ONLY');
    const aliases = `{ ${Array.from({ length: 1000 }, (_, i) => `a${i}: accounts { id margin { equity } }`).join(' ')} }`;
    const refused = await http('POST', p.urls.gateway, { token, body: { query: aliases } });
    expect(refused.status).toBe(400);
    expect(refused.body.data ?? null).toBeNull();
    const big = await http('POST', p.urls.gateway, { token, body: { query: `{ accounts { id } }${' '.repeat(70_000)}` } });
    expect([400, 413]).toContain(big.status);
  });
});
