import type { RequestHandler } from 'express';
import type { Registry } from 'prom-client';
import type { KeyValueStore } from '@trading/redis';
import { FailureLimiter, rateLimited, rateLimitHeaders } from './index';
import { rateLimitRefusals, type RefusalCounter } from './refusals';

/**
 * A per-address budget for `/oauth/*` at the facade, which passes those requests on without a
 * token (auth budgets them per vendor app, but only once it knows the app). Only what a
 * guesser or a flood produces is counted: answers 4xx (a wrong secret, code, verifier or token;
 * not auth's own 429) and GET /oauth/authorize, the one endpoint that succeeds without any
 * credential. A vendor's busy but correct token traffic from one backend is never counted, so it
 * is never refused. Once spent, the address gets 429 with Retry-After until the window ends,
 * before the facade signs or forwards anything. 0 turns it off.
 */
export class OAuthAddressBudget {
  private readonly failures: FailureLimiter | undefined;
  private readonly refusals: RefusalCounter | undefined;

  constructor(store: KeyValueStore, namespace: string, perMinute: number, metrics?: Registry) {
    if (perMinute <= 0) return;
    this.failures = new FailureLimiter(store, namespace, { name: 'oauth-address', maxFailures: perMinute, windowSeconds: 60 });
    this.refusals = metrics ? rateLimitRefusals(metrics, ['oauth-address']) : undefined;
  }

  /** For requests under `/oauth/` (paths relative to the router it is mounted on). */
  middleware(): RequestHandler {
    return async (req, res, next) => {
      const failures = this.failures;
      if (!failures) return next();
      const address = req.ip ?? 'unknown';
      try {
        const state = await failures.ifBlocked(address);
        if (state) {
          this.refusals?.inc({ limit: 'oauth-address' });
          res.set(rateLimitHeaders(state));
          return next(
            rateLimited(state, 'Too many failed or unauthenticated OAuth requests from this address; retry after the time in Retry-After'),
          );
        }
      } catch (err) {
        return next(err);
      }
      const unauthenticated = req.method === 'GET' && req.path === '/oauth/authorize';
      res.once('finish', () => {
        const failed = res.statusCode >= 400 && res.statusCode < 500 && res.statusCode !== 429;
        // Counted after the answer; a Redis failure here only loses one count (the next check answers 503).
        if (failed || unauthenticated) failures.fail(address).catch(() => undefined);
      });
      next();
    };
  }
}
