import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createClient } from 'redis';
import { signEvent, toFields, type DomainEvent } from '@trading/events';
import { TEST_REDIS_URL } from '@trading/testing';
import { admin } from '../support/oauth-helpers';
import { until } from '../support/orders-platform';
import { newUser, sessionToken } from '../support/pat-helpers';
import { takeServerSentEvents } from '../support/server-sent-events';
import { inDays, startTestPlatform, type TestPlatform } from '../support/test-platform';

interface Received {
  id?: string;
  event: string;
  data: any;
  /** performance.now() when it arrived. */
  at: number;
}

/** An open event stream: `events` fills as they arrive, each with its arrival time. */
async function openStream(url: string, token: string, lastEventId?: string) {
  const abort = new AbortController();
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    signal: abort.signal,
  });
  const events: Received[] = [];
  if (res.ok) {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    void (async () => {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) return;
        buffer += decoder.decode(chunk.value, { stream: true });
        const taken = takeServerSentEvents(buffer);
        buffer = taken.rest;
        for (const event of taken.events) events.push({ ...event, at: performance.now() } as Received);
      }
    })().catch(() => undefined); // aborted
  } else await res.body?.cancel();
  return { status: res.status, headers: res.headers, events, close: () => abort.abort() };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** F3 and F4 of the attacking review: replays of the order event stream, and slots of streams whose client left early. */
describe('GET /v1/oms/{accountId}/events under abuse', () => {
  let p: TestPlatform;
  const REPLAYS_PER_MINUTE = 20;

  beforeAll(async () => {
    p = await startTestPlatform({}, { facade: { ORDER_EVENTS_REPLAYS_PER_MINUTE: REPLAYS_PER_MINUTE } });
  }, 60_000);
  afterAll(() => p?.stop());

  const eventsUrl = (accountId: string) => `${p.urls.api}/oms/${accountId}/events`;
  /** A user with a READ_WRITE PAT session and an account of their own. */
  const user = async () => {
    const u = await newUser(p);
    const pat = await admin(p, 'POST', '/pats', { email: u.email, name: 'events', scope: 'READ_WRITE', expires: inDays(5) });
    const session = await sessionToken(p.urls.api, pat.body.token);
    const { body: account } = await admin(p, 'POST', '/accounts', { email: u.email, type: 'CASH', currency: 'USD' });
    return { session, accountId: account.accountId as string };
  };
  /** An order change of `accountId`, signed as the OMS signs what it publishes. */
  const orderUpdate = (accountId: string): DomainEvent => {
    const eventId = randomUUID();
    const now = new Date().toISOString();
    const order = {
      id: randomUUID(),
      accountId,
      symbol: 'AAPL',
      side: 'BUY',
      status: 'NEW',
      quantity: '1',
      filledQuantity: '0',
      updatedAt: now,
    };
    return signEvent(
      { eventId, type: 'order.updated', payload: { eventId, type: 'order.updated', occurredAt: now, order } },
      p.identityOf('oms').SERVICE_KEY,
    );
  };

  it('attack: 20 replays of a 100,000-event stream from its start, each abandoned after 0.5 s, leave another user’s live events on time', async () => {
    // Other users' order events, as a busy broker's stream holds them (1,000 signed events, each 100 times).
    const redis = await createClient({ url: TEST_REDIS_URL }).connect();
    const others = Array.from({ length: 1000 }, () => orderUpdate(randomUUID()));
    const message = (e: DomainEvent) => {
      const fields = toFields(e);
      return Object.fromEntries(Array.from({ length: fields.length / 2 }, (_, i) => [fields[2 * i]!, fields[2 * i + 1]!]));
    };
    for (let batch = 0; batch < 20; batch++)
      await Promise.all(Array.from({ length: 5000 }, (_, i) => redis.xAdd(p.events.stream, '*', message(others[i % others.length]!))));
    // Settlement consumers pass over them (nothing to book): let them finish before anything is measured.
    await until(
      async () => (await redis.xInfoGroups(p.events.stream)) as unknown as Array<Record<string, unknown>>,
      (groups) => groups.every((g) => Number(g['lag'] ?? 0) === 0 && Number(g['pending'] ?? 0) === 0),
      'the settlement consumers to catch up',
    );
    redis.destroy();

    const victim = await user();
    const attacker = await user();
    const live = await openStream(eventsUrl(victim.accountId), victim.session);
    expect(live.status).toBe(200);
    const latencies: number[] = [];
    /** Publishes an event of the victim's and waits for it on the open stream; its latency in ms. */
    const publishAndWait = async () => {
      const sent = orderUpdate(victim.accountId);
      const orderId = (sent.payload['order'] as { id: string }).id;
      const start = performance.now();
      await p.events.log.append(p.events.stream, sent);
      const got = await until(
        async () => live.events.find((e) => e.data?.id === orderId),
        (e) => !!e,
        'the victim’s event',
      );
      return got!.at - start;
    };
    await publishAndWait(); // the live reader is running

    // The attack: rounds of 5 replays (the attacker's open streams at most) from the stream's start,
    // each hung up after 0.5 s, while the victim's events keep being published.
    let attacking = true;
    const victimSide = (async () => {
      while (attacking) {
        latencies.push(await publishAndWait());
        await pause(100);
      }
    })();
    const statuses: number[] = [];
    for (let round = 0; round < 4; round++) {
      const replays = await Promise.all(
        Array.from({ length: 5 }, async () => {
          for (let tries = 0; ; tries++) {
            const s = await openStream(eventsUrl(attacker.accountId), attacker.session, '0-1');
            // The previous round's slots are given back when the server sees the hang-up.
            if (s.status !== 429 || tries >= 20) return s;
            await pause(50);
          }
        }),
      );
      statuses.push(...replays.map((s) => s.status));
      await pause(500);
      for (const s of replays) s.close();
    }
    // Work a hung-up replay went on doing would show now.
    await pause(2000);
    attacking = false;
    await victimSide;
    live.close();

    expect(statuses).toEqual(Array(20).fill(200));
    expect(latencies.filter((ms) => ms >= 200).map(Math.round)).toEqual([]); // each within 200 ms of being published
    expect(latencies.length).toBeGreaterThan(10);
  }, 120_000);

  it('a client that hangs up while its account is being checked keeps no stream slot', async () => {
    const owner = await user();
    const { port } = new URL(p.urls.api);
    // Sent, then hung up a few ms later: before the answer, while the token and the account are checked.
    const hangUp = (afterMs: number) =>
      new Promise<void>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => {
          socket.write(
            `GET /v1/oms/${owner.accountId}/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${owner.session}\r\nAccept: text/event-stream\r\n\r\n`,
          );
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, afterMs);
        });
        socket.on('error', reject);
      });
    for (const afterMs of [1, 2, 3, 5, 8, 10, 15, 20]) await hangUp(afterMs);
    await pause(1000); // whatever those requests still do on the server is done

    // Every slot is free: as many streams as allowed open at once.
    const streams = await Promise.all(Array.from({ length: 5 }, () => openStream(eventsUrl(owner.accountId), owner.session)));
    for (const s of streams) s.close();
    expect(streams.map((s) => s.status)).toEqual(Array(5).fill(200));
  }, 60_000);

  it('abuse: replays past the per-user budget are refused with 429 and Retry-After; another user, and a stream without Last-Event-ID, are not', async () => {
    const greedy = await user();
    const other = await user();
    const head = await p.events.log.lastId(p.events.stream);
    for (let i = 0; i < REPLAYS_PER_MINUTE; i++) {
      const s = await openStream(eventsUrl(greedy.accountId), greedy.session, head);
      s.close();
      expect(s.status).toBe(200);
      await pause(20); // its slot is given back
    }
    const refused = await fetch(eventsUrl(greedy.accountId), {
      headers: { authorization: `Bearer ${greedy.session}`, accept: 'text/event-stream', 'last-event-id': head },
    });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ code: 'RATE_LIMITED', status: 429 });

    // The live stream is still theirs, and another user's replay is not affected.
    const liveOnly = await openStream(eventsUrl(greedy.accountId), greedy.session);
    const othersReplay = await openStream(eventsUrl(other.accountId), other.session, head);
    liveOnly.close();
    othersReplay.close();
    expect([liveOnly.status, othersReplay.status]).toEqual([200, 200]);
  }, 60_000);
});
