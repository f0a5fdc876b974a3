import { randomUUID } from 'node:crypto';
import { restContract } from '@trading/rest-facade-service';
import { SessionStore } from '@trading/auth';
import { openRedisClient } from '@trading/redis';
import { http } from '@trading/testing';
import { admin, provisionApp, tokensFor } from '../support/oauth-helpers';
import { fund, startOrdersPlatform, until } from '../support/orders-platform';
import { extraFacade, newUser, sessionToken } from '../support/pat-helpers';
import { scopedSession } from '../support/sessions';
import { EventStreamReader as EventStream } from '../support/server-sent-events';
import { inDays, startTestPlatform, type TestPlatform } from '../support/test-platform';

/** Live order events over Server-Sent Events, resumable with Last-Event-ID. */
describe('GET /v1/oms/{accountId}/events', () => {
  let p: TestPlatform;
  const streams: EventStream[] = [];
  const open = async (accountId: string, token: string, lastEventId?: string) => {
    const stream = await EventStream.open(`${p.urls.api}/oms/${accountId}/events`, token, lastEventId);
    streams.push(stream);
    return stream;
  };
  /** A new user with a READ_WRITE PAT session and a funded account of their own. */
  const trader = async () => {
    const user = await newUser(p);
    const pat = await admin(p, 'POST', '/pats', { email: user.email, name: 'events', scope: 'READ_WRITE', expires: inDays(5) });
    const session = await sessionToken(p.urls.api, pat.body.token);
    const { body: account } = await admin(p, 'POST', '/accounts', { email: user.email, type: 'CASH', currency: 'USD' });
    await fund(p, session, account.accountId, '5000.00');
    return { ...user, session, patId: pat.body.tokenId as string, accountId: account.accountId as string };
  };
  const place = (t: { session: string; accountId: string }, body: Record<string, unknown>) =>
    http('POST', `${p.urls.api}/oms/order`, {
      token: t.session,
      body: { accountId: t.accountId, symbol: 'AAPL', side: 'BUY', timeInForce: 'GTC', quantity: '2', ...body },
    });

  beforeAll(async () => {
    p = await startOrdersPlatform();
    await p.oms.feed.setPrice('AAPL', '189.90');
  }, 60_000);
  afterEach(() => {
    for (const s of streams.splice(0)) s.close();
  });
  afterAll(() => p?.stop());

  it('streams an order from NEW to FILLED with its fill, each event with an id', async () => {
    const t = await trader();
    const stream = await open(t.accountId, t.session);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const order = await place(t, { type: 'MARKET', timeInForce: 'DAY', clientOrderId: 'sse-1' });
    expect(order.status).toBe(201);

    const placed = await stream.next();
    expect(placed).toMatchObject({
      id: expect.stringMatching(/^\d+-\d+$/),
      event: 'order',
      data: { id: order.body.id, accountId: t.accountId, clientOrderId: 'sse-1', status: 'NEW', filledQuantity: '0' },
    });
    const fill = await stream.next();
    expect(fill).toMatchObject({
      event: 'fill',
      data: { orderId: order.body.id, quantity: '2', price: '190.00', grossAmount: '380.00', currency: 'USD' },
    });
    const filled = await stream.next();
    expect(filled).toMatchObject({
      event: 'order',
      data: { id: order.body.id, status: 'FILLED', filledQuantity: '2', averageFillPrice: '190.00' },
    });
    expect([placed!.id, fill!.id, filled!.id]).toEqual([...new Set([placed!.id, fill!.id, filled!.id])]);
    // Each event's data is what the OpenAPI document says (OrderUpdate, Trade), fields in its order.
    expect(Object.keys(filled!.data)).toEqual(Object.keys(restContract.orderUpdate.shape));
    expect(restContract.trade.safeParse(fill!.data).success).toBe(true);
  }, 30_000);

  it('resumes after a reconnect with Last-Event-ID: what happened meanwhile, no gap, no repeat', async () => {
    const t = await trader();
    const first = await open(t.accountId, t.session);
    const resting = await place(t, { type: 'LIMIT', limitPrice: '185.00' });
    const placed = await first.next();
    expect(placed).toMatchObject({ event: 'order', data: { id: resting.body.id, status: 'NEW' } });
    first.close();

    // While no stream is open the order fills, and another one is placed and cancelled.
    await p.oms.feed.setPrice('AAPL', '184.00');
    await until(
      () => http('GET', `${p.urls.api}/oms/${t.accountId}/order/${resting.body.id}`, { token: t.session }),
      (r) => r.body.status === 'FILLED',
      'the fill',
    );
    const other = await place(t, { type: 'LIMIT', limitPrice: '100.00' });
    expect((await http('DELETE', `${p.urls.api}/oms/order?orderId=${other.body.id}`, { token: t.session })).status).toBe(200);
    await p.oms.feed.setPrice('AAPL', '189.90');

    const resumed = await open(t.accountId, t.session, placed!.id);
    const seen: Array<[string | undefined, string, string | undefined]> = [];
    for (let i = 0; i < 4; i++) {
      const e = (await resumed.next())!;
      seen.push([e.event, e.data.orderId ?? e.data.id, e.data.status]);
    }
    expect(seen).toEqual([
      ['fill', resting.body.id, undefined],
      ['order', resting.body.id, 'FILLED'],
      ['order', other.body.id, 'NEW'],
      ['order', other.body.id, 'CANCELLED'],
    ]);
    // …and then live again, on the same stream.
    const live = await place(t, { type: 'LIMIT', limitPrice: '100.00' });
    expect(await resumed.next()).toMatchObject({ event: 'order', data: { id: live.body.id, status: 'NEW' } });
  }, 30_000);

  it("refuses another user's account, a token without read:orders and a made-up Last-Event-ID", async () => {
    const t = await trader();
    const stranger = await trader();
    expect((await open(t.accountId, stranger.session)).status).toBe(404);
    const noOrders = await scopedSession(p, t.email, ['read:accounts', 'read:banking']);
    const refused = await open(t.accountId, noOrders);
    expect(refused.status).toBe(403);
    expect((await open(t.accountId, t.session, 'not-an-id')).status).toBe(400);
    expect((await open(randomUUID(), t.session)).status).toBe(404);
    expect((await http('POST', `${p.urls.api}/oms/${t.accountId}/events`, { token: t.session })).status).toBe(405);
  }, 30_000);

  it('attack: an event written straight into Redis, unsigned, never reaches a client', async () => {
    const t = await trader();
    const stream = await open(t.accountId, t.session);
    await new Promise((r) => setTimeout(r, 300)); // the stream is being read
    const forged = {
      id: randomUUID(),
      accountId: t.accountId,
      status: 'FILLED',
      updatedAt: new Date().toISOString(),
      symbol: 'AAPL',
      filledQuantity: '1000',
    };
    await p.events.log.append(p.events.stream, { eventId: randomUUID(), type: 'order.updated', payload: { order: forged } });
    const real = await place(t, { type: 'LIMIT', limitPrice: '100.00' });
    expect(await stream.next()).toMatchObject({ event: 'order', data: { id: real.body.id, status: 'NEW' } });
  }, 30_000);

  // Last of this platform's tests: the stream it trims stays trimmed.
  it('says `event: gap` before the replay when events after Last-Event-ID are no longer kept', async () => {
    const t = await trader();
    const first = await open(t.accountId, t.session);
    const one = await place(t, { type: 'LIMIT', limitPrice: '100.00' });
    const placed = await first.next();
    const two = await place(t, { type: 'LIMIT', limitPrice: '100.00' });
    const lostEvent = await first.next();
    const three = await place(t, { type: 'LIMIT', limitPrice: '100.00' });
    expect((await first.next())!.data.id).toBe(three.body.id);
    first.close();
    expect([placed!.data.id, lostEvent!.data.id]).toEqual([one.body.id, two.body.id]);

    // Nothing dropped yet: a resume is whole, with no gap event.
    const whole = await open(t.accountId, t.session, placed!.id);
    expect((await whole.next())!).toMatchObject({ event: 'order', data: { id: two.body.id } });
    whole.close();

    // The stream loses the second order's event (as trimming does to the oldest ones).
    const redis = await openRedisClient(p.config); // the platform's Redis, a Cluster too
    expect(await redis.xDel(p.events.stream, lostEvent!.id!)).toBe(1);
    redis.destroy();
    const resumed = await open(t.accountId, t.session, placed!.id);
    const gap = (await resumed.next())!;
    expect(gap).toMatchObject({ event: 'gap', data: { reason: expect.stringContaining('no longer kept') } });
    expect(gap.id).toBeUndefined(); // the client's Last-Event-ID stays where it was
    expect((await resumed.next())!).toMatchObject({ id: expect.any(String), event: 'order', data: { id: three.body.id } });
    // Resuming after what was lost needs no gap.
    const after = await open(t.accountId, t.session, lostEvent!.id);
    const live = await place(t, { type: 'LIMIT', limitPrice: '100.00' });
    expect((await after.next())!).toMatchObject({ event: 'order', data: { id: three.body.id } });
    expect((await after.next())!).toMatchObject({ event: 'order', data: { id: live.body.id } });
  }, 30_000);
});

describe('GET /v1/oms/{accountId}/events and the session', () => {
  let p: TestPlatform;

  beforeAll(async () => {
    p = await startTestPlatform({}, { facade: { ORDER_EVENTS_HEARTBEAT_MS: 200, ORDER_EVENTS_MAX_STREAMS_PER_USER: 2 } });
  }, 60_000);
  afterAll(() => p?.stop());

  it('ends the stream when the session is revoked, and caps open streams per user', async () => {
    const user = await newUser(p);
    const pat = await admin(p, 'POST', '/pats', { email: user.email, name: 'events', scope: 'READ_WRITE', expires: inDays(5) });
    const session = await sessionToken(p.urls.api, pat.body.token);
    const { body: account } = await admin(p, 'POST', '/accounts', { email: user.email, type: 'CASH', currency: 'USD' });
    const url = `${p.urls.api}/oms/${account.accountId}/events`;
    const streams = [await EventStream.open(url, session), await EventStream.open(url, session)];
    expect(streams.map((s) => s.status)).toEqual([200, 200]);
    const third = await EventStream.open(url, session);
    expect(third.status).toBe(429);
    third.close();

    expect((await http('POST', `${p.urls.api}/pat/revoke`, { token: session, body: { tokenId: pat.body.tokenId } })).status).toBe(200);
    for (const s of streams) {
      expect(await s.next(5000)).toMatchObject({ event: 'end', data: { reason: expect.stringContaining('session has ended') } });
      expect(await s.next(5000)).toBeNull();
      s.close();
    }
  }, 30_000);
});

/** Revocation is immediate for open streams too, on every instance (the heartbeat stays 15 s here). */
describe('GET /v1/oms/{accountId}/events when access ends', () => {
  let p: TestPlatform;
  let other: Awaited<ReturnType<typeof extraFacade>>;

  beforeAll(async () => {
    p = await startTestPlatform();
    other = await extraFacade(p); // a second facade instance: the revocation is sent to the first
  }, 60_000);
  afterAll(async () => {
    await other?.close();
    await p?.stop();
  });

  async function userWithAccount() {
    const user = await newUser(p);
    const { body: account } = await admin(p, 'POST', '/accounts', { email: user.email, type: 'CASH', currency: 'USD' });
    return { user, accountId: account.accountId as string };
  }

  it('a revoked PAT ends its streams on both instances within a second, with event: end naming why', async () => {
    const { user, accountId } = await userWithAccount();
    const pat = await admin(p, 'POST', '/pats', { email: user.email, name: 'events', scope: 'READ_WRITE', expires: inDays(5) });
    const session = await sessionToken(p.urls.api, pat.body.token);
    const here = await EventStream.open(`${p.urls.api}/oms/${accountId}/events`, session);
    const there = await EventStream.open(`${other.api}/oms/${accountId}/events`, session);
    expect([here.status, there.status]).toEqual([200, 200]);

    expect((await http('POST', `${p.urls.api}/pat/revoke`, { token: session, body: { tokenId: pat.body.tokenId } })).status).toBe(200);
    for (const stream of [here, there]) {
      expect(await stream.next(1500)).toMatchObject({ event: 'end', data: { reason: expect.stringContaining('session has ended') } });
      expect(await stream.next(1500)).toBeNull();
      stream.close();
    }
  }, 30_000);

  it("a vendor app's grant revoked (POST /oauth/revoke) ends the app's streams on both instances within a second", async () => {
    const { user, accountId } = await userWithAccount();
    const app = await provisionApp(p, { scopes: ['read:accounts', 'read:orders'] }, ['read:accounts', 'read:orders']);
    const tokens = await tokensFor(p, app, user, 'read:accounts read:orders');
    const here = await EventStream.open(`${p.urls.api}/oms/${accountId}/events`, tokens.access_token);
    const there = await EventStream.open(`${other.api}/oms/${accountId}/events`, tokens.access_token);
    expect([here.status, there.status]).toEqual([200, 200]);

    const revoked = await http('POST', `${p.urls.api}/oauth/revoke`, {
      body: { token: tokens.refresh_token, client_id: app.clientId, client_secret: app.clientSecret },
    });
    expect(revoked.status).toBe(200);
    for (const stream of [here, there]) {
      expect(await stream.next(1500)).toMatchObject({ event: 'end' });
      stream.close();
    }
  }, 30_000);

  it("suspending a vendor app (admin API) ends its users' streams on both instances within a second", async () => {
    const { user, accountId } = await userWithAccount();
    const app = await provisionApp(p, { scopes: ['read:accounts', 'read:orders'] }, ['read:accounts', 'read:orders']);
    const tokens = await tokensFor(p, app, user, 'read:accounts read:orders');
    const here = await EventStream.open(`${p.urls.api}/oms/${accountId}/events`, tokens.access_token);
    const there = await EventStream.open(`${other.api}/oms/${accountId}/events`, tokens.access_token);
    expect([here.status, there.status]).toEqual([200, 200]);

    expect((await admin(p, 'POST', `/apps/${app.clientId}/suspend`)).body).toMatchObject({ status: 'SUSPENDED', grantsRevoked: 1 });
    for (const stream of [here, there]) {
      expect(await stream.next(1500)).toMatchObject({ event: 'end', data: { reason: expect.stringContaining('session has ended') } });
      expect(await stream.next(1500)).toBeNull();
      stream.close();
    }
  }, 30_000);

  it('a token that expires ends its streams within a second of its expiry, on both instances, saying so', async () => {
    const { user, accountId } = await userWithAccount();
    const found = (await p.auth.users.findByEmail(user.email))!;
    // An access token as auth issues one, with 3 s to live (its session record expires with it).
    const sid = randomUUID();
    await new SessionStore(p.store).create({
      sid,
      userId: found.id,
      kind: 'oauth',
      clientId: 'e2e-vendor',
      expiresAt: Math.floor(Date.now() / 1000) + 3,
    });
    const token = await p.auth.signer.sign({ sub: found.id, sid, kind: 'oauth', clientId: 'e2e-vendor', scope: ['read:orders'] }, 3);
    const here = await EventStream.open(`${p.urls.api}/oms/${accountId}/events`, token);
    const there = await EventStream.open(`${other.api}/oms/${accountId}/events`, token);
    expect([here.status, there.status]).toEqual([200, 200]);
    const expiresAt = (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { exp: number }).exp * 1000;

    for (const stream of [here, there]) {
      const end = await stream.next(5000);
      expect(end).toMatchObject({ event: 'end', data: { reason: expect.stringMatching(/expired/) } });
      expect(Date.now() - expiresAt).toBeLessThan(1500); // the check runs every second; jose allows no clock skew here
      stream.close();
    }
  }, 30_000);
});
