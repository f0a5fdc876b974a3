import type { RequestHandler } from 'express';

/** What a browser page may send besides the CORS-safelisted headers. */
const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'Last-Event-ID', 'DPoP'];
/** Response headers the facade sets that a page should be able to read (budgets, retry hints, the request id for support). */
const CORS_EXPOSED_HEADERS = [
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'RateLimit-Policy',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'X-RateLimit-Budget',
  'Retry-After',
  'WWW-Authenticate',
  'DPoP-Nonce',
  'Allow',
  'X-Request-Id',
];
const CORS_MAX_AGE_SECONDS = 600;

/**
 * Paths that stay server-to-server: `/oauth/*` (a client secret never belongs in a page) and
 * `/pat/*` (a user's own tokens, which no vendor app may manage). Case-insensitive, as routing is.
 */
const NO_CORS = /^\/(oauth|pat)(\/|$)/i;

/**
 * CORS for the web origins vendor apps registered (mounted on /v1, before rate limits and
 * authentication). A preflight (OPTIONS with Origin and Access-Control-Request-Method) is
 * answered here with 204: with the allow headers for a registered origin, without them for any
 * other, so the browser refuses. Other requests from a registered origin get
 * Access-Control-Allow-Origin (that exact origin, never *) and the exposed headers, errors
 * included. No Access-Control-Allow-Credentials: the token travels in Authorization, not in a
 * cookie.
 */
export function corsForRegisteredOrigins(isRegistered: (origin: string) => Promise<boolean>, methods: readonly string[]): RequestHandler {
  const allowMethods = methods.join(', ');
  const allowHeaders = CORS_ALLOWED_HEADERS.join(', ');
  const exposeHeaders = CORS_EXPOSED_HEADERS.join(', ');
  return async (req, res, next) => {
    if (NO_CORS.test(req.path)) return next();
    // Whether a response carries CORS headers depends on Origin, so caches must key on it.
    res.vary('Origin');
    const origin = req.get('origin');
    if (!origin) return next();
    const allowed = origin.length <= 300 && (await isRegistered(origin));
    if (req.method === 'OPTIONS' && req.get('access-control-request-method')) {
      if (allowed)
        res.set({
          'Access-Control-Allow-Origin': origin,
          'Access-Control-Allow-Methods': allowMethods,
          'Access-Control-Allow-Headers': allowHeaders,
          'Access-Control-Max-Age': String(CORS_MAX_AGE_SECONDS),
        });
      res.status(204).end();
      return;
    }
    if (allowed) res.set({ 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': exposeHeaders });
    next();
  };
}
