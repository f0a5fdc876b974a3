import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';
import { rateLimitHeaders } from '@trading/rate-limit';
import type { KeyValueStore } from '@trading/redis';
import { OAuthError } from './errors';

/**
 * A fixed-window limit on every request per client address (DESIGN §6: tighter on
 * /oauth/token). Counted in Redis, so shared by every instance; answered with 429,
 * Retry-After and RateLimit-* headers.
 */
export function requestLimit(store: KeyValueStore, namespace: string, name: string, max: number, windowSeconds: number): RequestHandler {
  return async (req, res, next) => {
    const ip = createHash('sha256').update(req.ip ?? 'unknown').digest('base64url').slice(0, 32);
    let hit;
    try {
      hit = await store.hit(`ratelimit:${namespace}:${name}:${ip}`, windowSeconds);
    } catch {
      return next(new OAuthError('temporarily_unavailable', 'Rate limiting is temporarily unavailable; retry shortly', 503));
    }
    const blocked = hit.count > max;
    res.set(rateLimitHeaders({ limit: max, remaining: Math.max(0, max - hit.count), resetSeconds: hit.resetSeconds, windowSeconds, blocked }));
    next(blocked ? new OAuthError('too_many_requests', 'Too many requests; retry after the time in Retry-After', 429) : undefined);
  };
}
