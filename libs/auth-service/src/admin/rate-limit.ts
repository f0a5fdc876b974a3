import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';
import { errors } from '@trading/errors';
import { rateLimited, rateLimitHeaders, type RefusalCounter } from '@trading/rate-limit';
import type { KeyValueStore } from '@trading/redis';

/**
 * Admin API calls per client address per minute, counted in Redis (every auth instance shares
 * the count). The admin listener is loopback by default, so this mostly bounds a runaway script
 * or a guessing loop; the answer is a problem+json 429 like every other limit, counted as `admin`.
 */
export function adminRateLimit(store: KeyValueStore, namespace: string, perMinute: number, refusals: RefusalCounter): RequestHandler {
  return async (req, res, next) => {
    const address = createHash('sha256')
      .update(req.ip ?? 'unknown')
      .digest('base64url')
      .slice(0, 32);
    let hit;
    try {
      hit = await store.hit(`ratelimit:${namespace}:admin:${address}`, 60);
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
    next(rateLimited(state, 'Too many admin API calls; retry after the time in Retry-After'));
  };
}
