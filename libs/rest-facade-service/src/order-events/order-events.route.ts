import { Router, type Request, type Response } from 'express';
import { missingScopes, PROOF_CHECKED_AT_OPEN, type EdgeAuthenticator } from '@trading/auth';
import { AppError, errors } from '@trading/errors';
import { compareEntryIds, isEntryId } from '@trading/events';
import { rateLimited, rateLimitHeaders, type RefusalCounter, type RequestLimiter } from '@trading/rate-limit';
import type { GatewayClient } from '../edge/gateway-client';
import { uuidParam } from '../routes/params';
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
  /** Open streams per user on one facade instance. */
  maxStreamsPerUser: number;
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
  const perUser = new Map<string, number>();
  return Router().get(ORDER_EVENTS_PATH, async (req: Request, res: Response) => {
    const claims = req.claims!;
    if (missingScopes(claims.scope, [...ORDER_EVENTS_SCOPES]).length) throw errors.insufficientScope([...ORDER_EVENTS_SCOPES]);
    const accountId = uuidParam(req, 'accountId');
    const resumeFrom = req.get('last-event-id') ?? (typeof req.query['lastEventId'] === 'string' ? req.query['lastEventId'] : undefined);
    if (resumeFrom !== undefined && !isEntryId(resumeFrom))
      throw errors.badInput('Last-Event-ID', 'Last-Event-ID must be the id of an event this stream sent');

    // The slot is taken, and given back when the client leaves, before anything is awaited: a
    // listener attached later misses a client that hangs up meanwhile, and its slot stays taken.
    const open = perUser.get(claims.sub) ?? 0;
    if (open >= options.maxStreamsPerUser)
      throw new AppError('RATE_LIMITED', `At most ${options.maxStreamsPerUser} event streams may be open at once; close one first`);
    perUser.set(claims.sub, open + 1);
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      const left = (perUser.get(claims.sub) ?? 1) - 1;
      if (left > 0) perUser.set(claims.sub, left);
      else perUser.delete(claims.sub);
    };
    const gone = new AbortController();
    res.once('close', () => {
      gone.abort();
      release();
    });
    // Hung up before this handler ran (while being authenticated): `close` has already fired.
    if (req.socket.destroyed) {
      gone.abort();
      release();
    }

    try {
      // The account must be the caller's, as for every other orders endpoint.
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
    } catch (err) {
      release();
      throw err;
    }
    if (gone.signal.aborted) return;

    res.status(200).set({
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    res.write('retry: 3000\n\n');

    let lastSent = resumeFrom ?? '0-0';
    let ended = false;
    const send = (event: ClientEvent) => {
      if (ended || compareEntryIds(event.id, lastSent) <= 0) return; // already sent (replay and live overlap)
      lastSent = event.id;
      res.write(`id: ${event.id}\nevent: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`);
    };
    // Live events wait while the replay runs, then go out in order after it.
    let backlog: ClientEvent[] | undefined = [];
    const unsubscribe = feed.subscribe(accountId, (event) => (backlog ? backlog.push(event) : send(event)));
    const end = (reason?: string) => {
      if (ended) return;
      ended = true;
      clearInterval(heartbeat);
      clearInterval(accessCheck);
      unsubscribe();
      release();
      if (reason && !res.writableEnded) res.write(`event: end\ndata: ${JSON.stringify({ reason })}\n\n`);
      res.end();
    };
    let checking = false;
    const accessCheck = setInterval(() => {
      if (checking || ended) return;
      checking = true;
      edge
        // A DPoP proof was checked when the stream opened; the token's binding is checked again.
        .authenticate(req.get('authorization'), req.ip, PROOF_CHECKED_AT_OPEN)
        .then(
          () => undefined,
          (err: unknown) => end(err instanceof AppError ? err.message : 'The session could not be confirmed'),
        )
        .finally(() => (checking = false));
    }, options.accessCheckMs ?? 1000);
    const heartbeat = setInterval(() => ended || res.write(': heartbeat\n\n'), options.heartbeatMs);
    gone.signal.addEventListener('abort', () => end(), { once: true });

    try {
      if (resumeFrom) {
        // Events after Last-Event-ID that the stream no longer keeps, that lie further back than a
        // replay reads, or that no trusted key verifies any more cannot be replayed: say so (no id, so
        // a client's Last-Event-ID stays put), then replay what is read; the client reads its orders again.
        const lost = await feed.lostAfter(resumeFrom);
        const replay = await feed.replay(accountId, resumeFrom, { maxEntries: options.replayMaxEntries, signal: gone.signal });
        if (!replay || ended) return;
        // One gap, however many reasons: the client does the same for each.
        const gap = replay.capped ? CAPPED_REASON : lost ? GAP_REASON : replay.unverified ? UNVERIFIED_REASON : undefined;
        if (gap) res.write(`event: gap\ndata: ${JSON.stringify({ reason: gap })}\n\n`);
        for (const event of replay.events) send(event);
      }
    } catch {
      return end('The event history could not be read; reconnect with Last-Event-ID');
    }
    const waiting = backlog;
    backlog = undefined;
    for (const event of waiting) send(event);
  });
}
