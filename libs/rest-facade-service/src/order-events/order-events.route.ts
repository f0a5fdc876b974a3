import { Router, type Request, type Response } from 'express';
import { missingScopes, type EdgeAuthenticator } from '@trading/auth';
import { errors } from '@trading/errors';
import { compareEntryIds, isEntryId } from '@trading/events';
import { rateLimited, rateLimitHeaders, type HeldSlots, type RefusalCounter, type RequestLimiter } from '@trading/rate-limit';
import type { GatewayClient } from '../edge/gateway-client';
import { uuidParam } from '../routes/params';
import { openEventStream, StreamSlots, type EventStream } from '../sse/event-stream';
import type { ClientEvent } from './client-events';
import type { LiveOrderFeed } from './live-feed';

export const ORDER_EVENTS_PATH = '/oms/:accountId/events';
export const ORDER_EVENTS_SCOPES = ['read:orders'] as const;
const GAP_REASON =
  'Some events after Last-Event-ID are no longer kept; read the orders (GET /v1/oms/{accountId}/orders) and trades again, then rely on the events that follow';
const UNVERIFIED_REASON =
  'Some events after Last-Event-ID can no longer be verified (signed with a key this installation no longer trusts, e.g. after a key was retired or its data was reset) and were left out; read the orders (GET /v1/oms/{accountId}/orders) and trades again, then rely on the events that follow';
const CAPPED_REASON =
  'Last-Event-ID is further back than a reconnect is replayed; read the orders (GET /v1/oms/{accountId}/orders) and trades again, then rely on the events that follow';

export interface OrderEventsOptions {
  /** A comment line this often keeps proxies from closing an idle stream. */
  heartbeatMs: number;
  /**
   * How often an open stream checks that its access still stands (session, token expiry, signing
   * key): answered from the edge's caches, which Redis invalidates the moment a PAT, grant or
   * session is revoked on any instance, so a stream ends within this of the revocation. Default 1 s.
   */
  accessCheckMs?: number;
  /** Open streams per user over every facade instance. */
  slots: HeldSlots;
  /** Settlement stream entries a replay (Last-Event-ID) reads back from the head at most; anything older is a gap. */
  replayMaxEntries: number;
  /** Replays per user per minute (a stream without Last-Event-ID takes none); refused with 429 once spent. */
  replays?: RequestLimiter;
  /** Where those refusals are counted (`rate_limit_refusals_total{limit="event-replays"}`). */
  refusals?: RefusalCounter;
}

/**
 * GET /v1/oms/{accountId}/events: Server-Sent Events of the account's orders (`order`: every
 * state change) and fills (`fill`), each with the settlement stream's entry id. A client that
 * reconnects with `Last-Event-ID` gets everything after it first, then the live events, with
 * no gap and no repeat; if the stream has since dropped events after that id, the id lies
 * further back than a replay reads, or events after it can no longer be verified (signed with a
 * key no longer trusted), `event: gap` says so first. Heartbeats keep it open; it
 * ends (`event: end`, naming why) within a second of the session, PAT or grant being revoked
 * (on whichever instance) or the token expiring.
 */
export function orderEventsRoute(
  feed: LiveOrderFeed,
  edge: EdgeAuthenticator,
  gateway: GatewayClient,
  options: OrderEventsOptions,
): Router {
  const slots = new StreamSlots(options.slots, 'event streams');
  return Router().get(ORDER_EVENTS_PATH, async (req: Request, res: Response) => {
    const claims = req.claims!;
    if (missingScopes(claims.scope, [...ORDER_EVENTS_SCOPES]).length) throw errors.insufficientScope([...ORDER_EVENTS_SCOPES]);
    const accountId = uuidParam(req, 'accountId');
    const resumeFrom = resumePoint(req);

    // The slot is taken first, its return wired before anything is awaited.
    const { gone, release } = await slots.take(req, res, claims.sub);

    try {
      await admitStream(gateway, options, req, res, accountId, resumeFrom);
    } catch (err) {
      release();
      throw err;
    }
    if (gone.aborted) return;
    await streamEvents(feed, edge, options, req, res, { accountId, resumeFrom, gone, release });
  });
}

/** Where a reconnecting client resumes (Last-Event-ID, or ?lastEventId): an id this stream sent. */
function resumePoint(req: Request): string | undefined {
  const resumeFrom = req.get('last-event-id') ?? (typeof req.query['lastEventId'] === 'string' ? req.query['lastEventId'] : undefined);
  if (resumeFrom !== undefined && !isEntryId(resumeFrom))
    throw errors.badInput('Last-Event-ID', 'Last-Event-ID must be the id of an event this stream sent');
  return resumeFrom;
}

/** The account must be the caller's, as for every other orders endpoint; a replay must fit the caller's budget. */
async function admitStream(
  gateway: GatewayClient,
  options: OrderEventsOptions,
  req: Request,
  res: Response,
  accountId: string,
  resumeFrom: string | undefined,
): Promise<void> {
  const claims = req.claims!;
  const data = await gateway.execute('query($id: ID!) { account(id: $id) { id } }', { id: accountId }, claims, req.requestId);
  if (!data['account']) throw errors.notFound('Account', 'accountId');
  if (resumeFrom !== undefined && options.replays) {
    // A replay reads the settlement stream (every user's events): a budget per user bounds that work.
    const state = await options.replays.take(claims.sub);
    if (state?.blocked) {
      options.refusals?.inc({ limit: 'event-replays' });
      res.set(rateLimitHeaders(state));
      throw rateLimited(
        state,
        'Too many reconnects with Last-Event-ID; retry after the time in Retry-After, or open the stream without it and read the orders again',
      );
    }
  }
}

/** The open stream: the replay after Last-Event-ID first, then the live events that came meanwhile, then the live ones as they come. */
async function streamEvents(
  feed: LiveOrderFeed,
  edge: EdgeAuthenticator,
  options: OrderEventsOptions,
  req: Request,
  res: Response,
  { accountId, resumeFrom, gone, release }: { accountId: string; resumeFrom: string | undefined; gone: AbortSignal; release: () => void },
): Promise<void> {
  let lastSent = resumeFrom ?? '0-0';
  const send = (event: ClientEvent) => {
    if (stream.ended || compareEntryIds(event.id, lastSent) <= 0) return; // already sent (replay and live overlap)
    lastSent = event.id;
    stream.write(`id: ${event.id}\nevent: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`);
  };
  // Live events wait while the replay runs, then go out in order after it.
  let backlog: ClientEvent[] | undefined = [];
  const unsubscribe = feed.subscribe(
    accountId,
    (event) => (backlog ? backlog.push(event) : send(event)),
    (reason) => {
      if (!stream.ended) stream.write(`event: gap\ndata: ${JSON.stringify({ reason })}\n\n`);
    },
  );
  const stream = openEventStream(req, res, edge, {
    heartbeatMs: options.heartbeatMs,
    accessCheckMs: options.accessCheckMs,
    signal: gone,
    onEnd: () => {
      unsubscribe();
      release();
    },
  });
  const end = stream.end;

  try {
    if (resumeFrom && !(await replayAfter(feed, stream, send, { accountId, resumeFrom, maxEntries: options.replayMaxEntries, gone })))
      return;
  } catch {
    return end('The event history could not be read; reconnect with Last-Event-ID');
  }
  const waiting = backlog;
  backlog = undefined;
  for (const event of waiting) send(event);
}

/**
 * Events after Last-Event-ID that the stream no longer keeps, that lie further back than a
 * replay reads, or that no trusted key verifies any more cannot be replayed: say so (no id, so
 * a client's Last-Event-ID stays put), then replay what is read; the client reads its orders again.
 * False when nothing more is to be sent (the client left, or the stream ended).
 */
async function replayAfter(
  feed: LiveOrderFeed,
  stream: EventStream,
  send: (event: ClientEvent) => void,
  { accountId, resumeFrom, maxEntries, gone }: { accountId: string; resumeFrom: string; maxEntries: number; gone: AbortSignal },
): Promise<boolean> {
  const lost = await feed.lostAfter(resumeFrom);
  const replayed = await feed.replay(accountId, resumeFrom, { maxEntries, signal: gone });
  if (!replayed || stream.ended) return false;
  // One gap, however many reasons: the client does the same for each.
  const gap = replayed.capped ? CAPPED_REASON : lost ? GAP_REASON : replayed.unverified ? UNVERIFIED_REASON : undefined;
  if (gap) stream.write(`event: gap\ndata: ${JSON.stringify({ reason: gap })}\n\n`);
  for (const event of replayed.events) send(event);
  return true;
}
