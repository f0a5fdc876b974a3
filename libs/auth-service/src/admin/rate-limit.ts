import { createHash } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { errors } from '@trading/errors';
import { rateLimited, rateLimitHeaders, type RefusalCounter } from '@trading/rate-limit';
import type { KeyValueStore } from '@trading/redis';

/**
 * Admin API calls per client address per minute, counted in Redis (every auth instance shares
 * the count). The admin listener is loopback by default, so this mostly bounds a runaway script
 * or a guessing loop; the answer is a problem+json 429 like every other limit, counted as `admin`.
 *
 * Calls with the admin credential and calls without it are two separate budgets, and the
 * credential is checked first: a guessing loop on the same host spends only the failures
 * budget, so it can never lock the real credential out.
 */
export function adminRateLimit(
  store: KeyValueStore,
  namespace: string,
  perMinute: number,
  refusals: RefusalCounter,
  isAdmin: (req: Request) => boolean,
): RequestHandler {
  return async (req, res, next) => {
    const admitted = isAdmin(req);
    const address = createHash('sha256')
      .update(req.ip ?? 'unknown')
      .digest('base64url')
      .slice(0, 32);
    let hit;
    try {
      hit = await store.hit(`ratelimit:${namespace}:${admitted ? 'admin' : 'admin-failures'}:${address}`, 60);
    } catch {
      return next(errors.unavailable('Rate limiting is temporarily unavailable; retry shortly'));
    }
    const state = {
      limit: perMinute,
      remaining: Math.max(0, perMinute - hit.count),
      resetSeconds: hit.resetSeconds,
      windowSeconds: 60,
      blocked: hit.count > perMinute,
    };
    res.set(rateLimitHeaders(state));
    if (!state.blocked) return next();
    refusals.inc({ limit: 'admin' });
    next(
      rateLimited(
        state,
        admitted
          ? 'Too many admin API calls; retry after the time in Retry-After'
          : 'Too many admin API calls without the admin credential; retry after the time in Retry-After',
      ),
    );
  };
}
