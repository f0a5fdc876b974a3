import { openRedisClient, type RedisClient } from '@trading/redis';
import { admin } from '../support/oauth-helpers';
import { extraFacade, newUser, sessionToken } from '../support/pat-helpers';
import { EventStreamReader } from '../support/server-sent-events';
import { inDays, startTestPlatform, type TestPlatform } from '../support/test-platform';

const CAP = 2;
const LEASE_MS = 1500;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Open event streams per user are counted over every facade instance (leases in Redis): spreading
 * streams over instances buys no more, a closed stream frees its slot on every instance, an open
 * one keeps it, and the slots of an instance that died lapse within the lease instead of keeping
 * their user out.
 */
describe('open event streams per user, over every facade instance', () => {
  let p: TestPlatform;
  let second: Awaited<ReturnType<typeof extraFacade>>;
  let redis: RedisClient;
  const settings = { MARKET_EVENTS_MAX_STREAMS_PER_USER: CAP, ORDER_EVENTS_MAX_STREAMS_PER_USER: CAP, EVENT_STREAM_LEASE_MS: LEASE_MS };
  const streams: EventStreamReader[] = [];
  const quotes = async (api: string, token: string) => {
    const s = await EventStreamReader.open(`${api}/market/events?symbols=AAPL`, token);
    streams.push(s);
    return s;
  };
  /** Opens a quote stream, retrying while a slot just given back is still on its way to Redis. */
  const quotesOnceFree = async (api: string, token: string) => {
    for (let tries = 0; ; tries++) {
      const s = await quotes(api, token);
      if (s.status !== 429 || tries >= 20) return s;
      s.close();
      await pause(50);
    }
  };
  const user = async () => {
    const { id, email } = await newUser(p);
    const pat = await admin(p, 'POST', '/pats', { email, name: 'streams', scope: 'READ_ONLY', expires: inDays(5) });
    return { id, email, session: await sessionToken(p.urls.api, pat.body.token) };
  };

  beforeAll(async () => {
    p = await startTestPlatform({}, { facade: settings });
    second = await extraFacade(p, [], p.urls.api, p.urls.authInternal, settings);
    redis = await openRedisClient(p.config);
  }, 60_000);
  afterEach(() => {
    for (const s of streams.splice(0)) s.close();
  });
  afterAll(async () => {
    await redis?.close();
    await second?.close();
    await p?.stop();
  });

  it('attack: streams spread over two instances get no more than the cap; the next is refused on either, and closing one frees a slot on the other', async () => {
    const u = await user();
    const first = await quotes(p.urls.api, u.session);
    const other = await quotes(second.api, u.session);
    expect([first.status, other.status]).toEqual([200, 200]);
    for (const api of [p.urls.api, second.api]) {
      const refused = await quotes(api, u.session);
      expect(refused.status).toBe(429);
      expect(JSON.parse(refused.body!)).toMatchObject({
        code: 'RATE_LIMITED',
        detail: expect.stringContaining(`At most ${CAP} quote streams`),
      });
    }
    // Another user is not affected.
    const stranger = await user();
    expect((await quotes(second.api, stranger.session)).status).toBe(200);

    first.close();
    expect((await quotesOnceFree(second.api, u.session)).status).toBe(200);
    expect((await quotes(p.urls.api, u.session)).status).toBe(429);
  });

  it('attack: order event streams are counted over the instances too', async () => {
    const u = await user();
    const { body: account } = await admin(p, 'POST', '/accounts', { email: u.email, type: 'CASH', currency: 'USD' });
    const events = async (api: string) => {
      const s = await EventStreamReader.open(`${api}/oms/${account.accountId}/events`, u.session);
      streams.push(s);
      return s.status;
    };
    expect([await events(p.urls.api), await events(second.api)]).toEqual([200, 200]);
    expect([await events(p.urls.api), await events(second.api)]).toEqual([429, 429]);
  });

  it('an open stream keeps its slot for as long as it lives, well past the lease (its instance renews it)', async () => {
    const u = await user();
    const held = [await quotes(p.urls.api, u.session), await quotes(second.api, u.session)];
    expect(held.map((s) => s.status)).toEqual([200, 200]);
    await pause(LEASE_MS * 2.5);
    expect((await quotes(p.urls.api, u.session)).status).toBe(429);
    expect((await quotes(second.api, u.session)).status).toBe(429);
  });

  it('the slots of an instance that died holding them lapse within the lease: their user is not kept out', async () => {
    const u = await user();
    // What a facade instance killed mid-stream leaves in Redis: two slots of this user's that no one renews or gives back.
    const key = `ratelimit:${p.config.PLATFORM_DB_PREFIX}api:quote-streams:${u.id}`;
    const leaseEnds = Date.now() + LEASE_MS;
    await redis.zAdd(key, [
      { score: leaseEnds, value: 'dead-instance-slot-1' },
      { score: leaseEnds, value: 'dead-instance-slot-2' },
    ]);
    expect((await quotes(p.urls.api, u.session)).status).toBe(429);
    expect((await quotes(second.api, u.session)).status).toBe(429);

    await pause(LEASE_MS + 200);
    expect((await quotes(p.urls.api, u.session)).status).toBe(200);
    expect((await quotes(second.api, u.session)).status).toBe(200);
  });
});
