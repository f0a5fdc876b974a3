import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { RedisEventLog } from '@trading/events';
import { http, TEST_REDIS_URL } from '@trading/testing';
import { DEMO_ACCOUNTS, SERVICE_IDENTITIES_FILE } from '@trading/platform';
import { startNpmStart, type NpmStart } from '../support/npm-start-process';
import { takeServerSentEvents, type ServerSentEvent } from '../support/server-sent-events';

const ACCOUNT = DEMO_ACCOUNTS[0]!.id;

/**
 * The order event stream of `p` from `lastEventId` on, read until `done` holds of what came
 * (or `ms` passed: then what came, for the assertion to show).
 */
async function eventsUntil(
  p: NpmStart,
  token: string,
  lastEventId: string | undefined,
  done: (events: ServerSentEvent[]) => boolean,
  options: { ms?: number; opened?: () => Promise<void> } = {},
): Promise<ServerSentEvent[]> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), options.ms ?? 30_000);
  const events: ServerSentEvent[] = [];
  try {
    const res = await fetch(`${p.api}/oms/${ACCOUNT}/events`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    await options.opened?.();
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    while (!done(events)) {
      const chunk = await reader.read();
      if (chunk.done) break;
      const taken = takeServerSentEvents((buffer += decoder.decode(chunk.value, { stream: true })));
      buffer = taken.rest;
      events.push(...taken.events);
    }
  } catch (err) {
    if (!abort.signal.aborted) throw err;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  return events;
}

/** A market order of the demo account that fills at once (the price feed runs). */
async function buy(p: NpmStart, token: string): Promise<string> {
  const placed = await http('POST', `${p.api}/oms/order`, {
    token,
    body: { accountId: ACCOUNT, symbol: 'AAPL', side: 'BUY', type: 'MARKET', timeInForce: 'DAY', quantity: '1' },
  });
  expect(placed.status).toBe(201);
  return placed.body.id as string;
}

const filled = (orderId: string) => (events: ServerSentEvent[]) =>
  events.some((e) => e.event === 'order' && e.data.id === orderId && e.data.status === 'FILLED');
/** What a client saw, compactly: [event, order id, status]. */
const seen = (events: ServerSentEvent[]) =>
  events.map((e) => [e.event, e.event === 'gap' ? e.data.reason : (e.data.orderId ?? e.data.id), e.data.status]);

async function stop(p: NpmStart): Promise<void> {
  const exited = new Promise<number | null>((resolve) => p.child.once('exit', (code) => resolve(code)));
  p.child.kill('SIGTERM');
  expect({ code: await exited, tail: '' }).toEqual({ code: 0, tail: '' });
}

/**
 * A client resuming the order event stream with Last-Event-ID after `npm start` was
 * restarted gets what the OMS signed before the restart (the services' identities are kept,
 * sealed, in the data directory); where events can no longer be verified (the identities were
 * lost), it is told so with `event: gap`, never left with silence.
 */
describe('npm start restarted: order events resume across it', () => {
  let first: NpmStart | undefined;
  let second: NpmStart | undefined;
  let third: NpmStart | undefined;
  /** Run 1's order: its first event (NEW), and the id of its last (FILLED). */
  let before: { orderId: string; newId: string; lastId: string };

  afterAll(async () => {
    for (const p of [first, second]) if (p && p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await (third ?? second ?? first)?.cleanUp();
  }, 60_000);

  it('keeps the identities in the data directory (0600, sealed), and events from before a restart replay after it, with no gap', async () => {
    first = await startNpmStart();
    const file = join(first.dataDir, SERVICE_IDENTITIES_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = readFileSync(file, 'utf8');
    expect(JSON.parse(stored)).toEqual({ version: 1, sealed: expect.stringMatching(/^enc:v1:/) });
    // No private key in the clear: no JWK field, no PEM.
    expect(stored).not.toMatch(/"d"|"kty"|PRIVATE KEY|"kid"/);

    const session = await first.session('READ_WRITE');
    let orderId = '';
    const live = await eventsUntil(first, session, undefined, (events) => filled(orderId)(events), {
      opened: async () => {
        await new Promise((r) => setTimeout(r, 300)); // the feed is reading the stream
        orderId = await buy(first!, session);
      },
    });
    expect(seen(live)).toEqual([
      ['order', orderId, 'NEW'],
      ['fill', orderId, undefined],
      ['order', orderId, 'FILLED'],
    ]);
    before = { orderId, newId: live[0]!.id!, lastId: live[2]!.id! };
    await stop(first);

    second = await startNpmStart({}, { over: first });
    expect(readFileSync(file, 'utf8')).toBe(stored); // read, not made again
    const after = await second.session('READ_WRITE'); // a session of the new run
    const later = await buy(second, after);

    // From the remembered id: what happened after the restart, nothing else, no gap.
    const resumed = await eventsUntil(second, after, before.lastId, filled(later));
    expect(seen(resumed)).toEqual([
      ['order', later, 'NEW'],
      ['fill', later, undefined],
      ['order', later, 'FILLED'],
    ]);
    // From further back: what the OMS signed before the restart too, then the rest.
    const whole = await eventsUntil(second, after, before.newId, filled(later));
    expect(seen(whole)).toEqual([
      ['fill', before.orderId, undefined],
      ['order', before.orderId, 'FILLED'],
      ['order', later, 'NEW'],
      ['fill', later, undefined],
      ['order', later, 'FILLED'],
    ]);

    // Attack: entries written straight into Redis (unsigned, or with a made-up signature) never reach
    // the client; a resume over them says `event: gap` (the client reads again), nothing of theirs.
    const redis = await RedisEventLog.connect(TEST_REDIS_URL);
    const forgedId = randomUUID();
    const order = {
      id: forgedId,
      accountId: ACCOUNT,
      symbol: 'AAPL',
      status: 'FILLED',
      filledQuantity: '1000',
      updatedAt: new Date().toISOString(),
    };
    await redis.append(`${second.prefix}oms:events`, { eventId: randomUUID(), type: 'order.updated', payload: { order } });
    await redis.append(`${second.prefix}oms:events`, {
      eventId: randomUUID(),
      type: 'order.updated',
      payload: { order },
      signature: `oms.${'0'.repeat(12)}.${'A'.repeat(86)}`,
    });
    await redis.close();
    const next = await buy(second, after);
    const overForged = await eventsUntil(second, after, resumed[2]!.id, filled(next));
    expect(seen(overForged)).toEqual([
      ['gap', expect.stringContaining('can no longer be verified'), undefined],
      ['order', next, 'NEW'],
      ['fill', next, undefined],
      ['order', next, 'FILLED'],
    ]);
    expect(JSON.stringify(overForged)).not.toContain(forgedId);
    await stop(second);
  }, 300_000);

  it('with the identities lost (file deleted), a resume over events signed by the old keys says event: gap, then goes on', async () => {
    const file = join(second!.dataDir, SERVICE_IDENTITIES_FILE);
    const old = readFileSync(file, 'utf8');
    rmSync(file);
    third = await startNpmStart({}, { over: second });
    expect(readFileSync(file, 'utf8')).not.toBe(old); // new identities

    const session = await third.session('READ_WRITE');
    const now = await buy(third, session);
    const resumed = await eventsUntil(third, session, before.newId, filled(now));
    expect(resumed[0]).toEqual({ event: 'gap', data: { reason: expect.stringContaining('can no longer be verified') } });
    // Nothing the old keys signed is shown; what the new ones signed is.
    expect(seen(resumed.slice(1))).toEqual([
      ['order', now, 'NEW'],
      ['fill', now, undefined],
      ['order', now, 'FILLED'],
    ]);
    await stop(third);
  }, 300_000);

  it('a key-encryption key that does not open the identities stops the start, naming the file and npm run reset', async () => {
    const file = join(third!.dataDir, SERVICE_IDENTITIES_FILE);
    const stored = readFileSync(file, 'utf8');
    const failed = startNpmStart({}, { over: { ...third!, keyEncryptionKey: `kek_wrong_${'x'.repeat(32)}` } });
    await expect(failed).rejects.toThrow(/identities in .*service-identities\.json cannot be decrypted[^]*npm run reset/);
    expect(readFileSync(file, 'utf8')).toBe(stored); // never replaced
  }, 120_000);
});
