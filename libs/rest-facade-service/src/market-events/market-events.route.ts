import { Router, type Request, type Response } from 'express';
import { missingScopes, type EdgeAuthenticator } from '@trading/auth';
import { errors } from '@trading/errors';
import { isEntryId } from '@trading/events';
import type { HeldSlots } from '@trading/rate-limit';
import type { GatewayClient } from '../edge/gateway-client';
import { symbolsParam } from '../routes/market.routes';
import { openEventStream, StreamSlots } from '../sse/event-stream';
import type { LiveQuoteFeed, Quote } from './live-quotes';

export const MARKET_EVENTS_PATH = '/market/events';
export const MARKET_EVENTS_SCOPES = ['read:market'] as const;
const QUOTES =
  'query($symbols: [String!]!) { marketQuotes(symbols: $symbols) { symbol lastPrice bid ask bidSize askSize timestamp currency } }';

export interface MarketEventsOptions {
  heartbeatMs: number;
  accessCheckMs?: number;
  /** Open quote streams per user over every facade instance. */
  slots: HeldSlots;
}

/**
 * GET /v1/market/events?symbols=AAPL,MSFT: Server-Sent Events of live quotes, `event: quote`
 * with a MarketQuote each time one of the symbols' price changes, with the quotes stream's entry
 * id. It starts with the current quote of every symbol (read through the gateway, which checks
 * the symbols and the scope), whether or not the client sends `Last-Event-ID`: a quote
 * supersedes the ones before it, so a reconnect needs the latest, not a replay. Heartbeats,
 * the per-user cap and the end on revocation are the order stream's (../sse).
 */
export function marketEventsRoute(
  feed: LiveQuoteFeed,
  edge: EdgeAuthenticator,
  gateway: GatewayClient,
  options: MarketEventsOptions,
): Router {
  const slots = new StreamSlots(options.slots, 'quote streams');
  return Router().get(MARKET_EVENTS_PATH, async (req: Request, res: Response) => {
    const claims = req.claims!;
    if (missingScopes(claims.scope, [...MARKET_EVENTS_SCOPES]).length) throw errors.insufficientScope([...MARKET_EVENTS_SCOPES]);
    const resumeFrom = req.get('last-event-id');
    if (resumeFrom !== undefined && !isEntryId(resumeFrom))
      throw errors.badInput('Last-Event-ID', 'Last-Event-ID must be the id of an event this stream sent');
    const symbols = symbolsParam(req);

    const { gone, release } = await slots.take(req, res, claims.sub);
    // Changes from now on wait while the current quotes are read, then go out after them.
    let backlog: Array<[string, Quote]> | undefined = [];
    const latest = new Map<string, string>();
    const send = (id: string, quote: Quote) => {
      // Never an older price after a newer one (the backlog may hold what the current quotes already show).
      const shown = latest.get(quote.symbol);
      if (stream.ended || (shown !== undefined && Date.parse(quote.timestamp) < Date.parse(shown))) return;
      latest.set(quote.symbol, quote.timestamp);
      stream.write(`id: ${id}\nevent: quote\ndata: ${JSON.stringify(quote)}\n\n`);
    };
    const unsubscribe = feed.subscribe([...new Set(symbols)], (id, quote) => (backlog ? backlog.push([id, quote]) : send(id, quote)));
    let current: { head: string; quotes: Quote[] };
    try {
      const head = await feed.head();
      const data = await gateway.execute(QUOTES, { symbols }, claims, req.requestId);
      current = { head, quotes: data['marketQuotes'] as Quote[] };
    } catch (err) {
      unsubscribe();
      release();
      throw err;
    }
    if (gone.aborted) {
      unsubscribe();
      return;
    }
    // Only now does anything reach `send` (until the backlog is let go below).
    const stream = openEventStream(req, res, edge, {
      heartbeatMs: options.heartbeatMs,
      accessCheckMs: options.accessCheckMs,
      signal: gone,
      onEnd: () => {
        unsubscribe();
        release();
      },
    });
    for (const quote of current.quotes) send(current.head, quote);
    const waiting = backlog;
    backlog = undefined;
    for (const [id, quote] of waiting) send(id, quote);
  });
}
