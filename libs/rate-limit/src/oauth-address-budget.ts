import type { Request, RequestHandler } from 'express';
import type { Registry } from 'prom-client';
import type { KeyValueStore } from '@trading/redis';
import { FailureLimiter, rateLimited, rateLimitHeaders, type LimitState } from './index';
import { rateLimitRefusals, type RefusalCounter } from './refusals';

/**
 * The requests an address budget covers: `/oauth/*` and `POST /pat/login`, the endpoints that
 * take no bearer token. Matched as Express routes them (case-insensitive, a trailing slash
 * allowed), so no other spelling of a path reaches its handler past the budget.
 */
function isAddressBudgetPath(path: string): boolean {
  const p = path.toLowerCase();
  return p.startsWith('/oauth/') || p === '/pat/login' || p === '/pat/login/';
}

/**
 * A per-address budget for the endpoints that take no bearer token (`/oauth/*`, `/pat/login`),
 * on every listener that serves them: the facade's `/v1` and auth's public listener. Both count
 * in the same Redis counter (the same namespace, keyed by the client address each decided on),
 * so alternating listeners buys no more. Only what a guesser or a flood produces is counted:
 * answers 4xx (a wrong secret, code, verifier, token or body; not a 429) and GET
 * /oauth/authorize, the one endpoint that succeeds without any credential. A vendor's busy but
 * correct token traffic from one backend is never counted, so it is never refused. Once spent,
 * the address gets 429 with Retry-After and RateLimit-* until the window ends, before anything
 * runs: in RFC 6749's shape under `/oauth/` (`temporarily_unavailable`, as auth's other token
 * limits), as a problem elsewhere. 0 turns it off.
 */
export class OAuthAddressBudget {
  private readonly failures: FailureLimiter | undefined;
  private readonly refusals: RefusalCounter | undefined;

  constructor(store: KeyValueStore, namespace: string, perMinute: number, metrics?: Registry) {
    if (perMinute <= 0) return;
    this.failures = new FailureLimiter(store, namespace, { name: 'oauth-address', maxFailures: perMinute, windowSeconds: 60 });
    this.refusals = metrics ? rateLimitRefusals(metrics, ['oauth-address']) : undefined;
  }

  /** Counts and refuses the requests `isAddressBudgetPath` names (paths relative to where it is mounted); passes every other one on. */
  middleware(): RequestHandler {
    return async (req, res, next) => {
      const failures = this.failures;
      if (!failures || !isAddressBudgetPath(req.path)) return next();
      const address = req.ip ?? 'unknown';
      try {
        const state = await failures.ifBlocked(address);
        if (state) {
          this.refusals?.inc({ limit: 'oauth-address' });
          res.set(rateLimitHeaders(state));
          return refuse(req, res, state, next);
        }
      } catch (err) {
        return next(err);
      }
      const unauthenticated = req.method === 'GET' && req.path.toLowerCase().startsWith('/oauth/authorize');
      res.once('finish', () => {
        const failed = res.statusCode >= 400 && res.statusCode < 500 && res.statusCode !== 429;
        // Counted after the answer; a Redis failure here only loses one count (the next check answers 503).
        if (failed || unauthenticated) failures.fail(address).catch(() => undefined);
      });
      next();
    };
  }
}

const DETAIL = 'Too many failed or unauthenticated requests from this address; retry after the time in Retry-After';

/** OAuth clients read `error` (RFC 6749 §5.2, as every other answer of `/oauth/*`); `/pat/login` answers problems. */
function refuse(req: Request, res: Parameters<RequestHandler>[1], state: LimitState, next: Parameters<RequestHandler>[2]) {
  if (!req.path.toLowerCase().startsWith('/oauth/')) return next(rateLimited(state, DETAIL));
  res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
  res.status(429).json({ error: 'temporarily_unavailable', error_description: DETAIL });
}
