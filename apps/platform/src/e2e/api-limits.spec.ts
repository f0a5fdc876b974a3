import { http } from '@trading/testing';
import { DEMO_USERS } from '../demo-data';
import { extraFacade } from './pat-helpers';
import { patSession } from './sessions';
import { startTestPlatform, type TestPlatform } from './test-platform';

const [alice, bob] = DEMO_USERS as [(typeof DEMO_USERS)[0], (typeof DEMO_USERS)[0]];

/** Issue 10, API limits: one caller's volume never costs another caller anything. */
describe('API request limits at the edges', () => {
  let p: TestPlatform;
  let behindProxy: Awaited<ReturnType<typeof extraFacade>>;

  beforeAll(async () => {
    p = await startTestPlatform({
      API_RATE_LIMIT_PER_MINUTE: '6',
      API_ORDER_RATE_LIMIT_PER_MINUTE: '2',
      API_ADDRESS_RATE_LIMIT_PER_MINUTE: '40',
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

  it('abuse: one address flooding without a token is refused; another address is not', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 41; i++)
      statuses.push((await http('GET', `${behindProxy.api}/accounts`, { headers: from('203.0.113.66') })).status);
    expect(statuses.slice(0, 40).every((s) => s === 401)).toBe(true);
    expect(statuses[40]).toBe(429);
    expect((await http('GET', `${behindProxy.api}/accounts`, { headers: from('203.0.113.67') })).status).toBe(401);
  });

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
