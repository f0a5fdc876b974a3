import type { Request, RequestHandler } from 'express';
import { methodAllowedFor, type Claims, type DpopRequest, type EdgeAuthenticator } from '@trading/auth';
import { AppError } from '@trading/errors';
import type { ApiLimits } from '@trading/rate-limit';

declare module 'express-serve-static-core' {
  interface Request {
    claims?: Claims;
  }
}

/**
 * The request as DPoP proofs name it (RFC 9449 §4.3): method and public URL. The URL is built
 * from the configured public {base_url}s (FACADE_PUBLIC_URL) and the path under /v1, never from
 * the Host header a caller chose; the query is not part of it.
 */
export type PublicRequest = (req: Request) => DpopRequest;

/** `bases`: the public {base_url}s, each ending in the mount path (`https://api.example/v1`). Used where mounted on that path. */
export function publicRequest(bases: readonly string[]): PublicRequest {
  const cleaned = bases.map((b) => b.replace(/\/+$/, ''));
  return (req) => ({ proof: req.get('dpop'), method: req.method, urls: cleaned.map((base) => base + req.path) });
}

/**
 * Authenticates every API call once, at the edge: token (and, for a DPoP-bound token, its proof
 * for this request), live session, IP restriction, and the PAT method rule
 * (READ_ONLY → GET, HEAD, OPTIONS only), then the token's and the user's request budgets. The
 * order budgets are charged by the placing route itself (routeTableRouter), not by a path string here.
 */
export function authenticate(edge: EdgeAuthenticator, limits: ApiLimits, request: PublicRequest): RequestHandler {
  return async (req, res, next) => {
    const claims = await edge
      .authenticate(req.get('authorization'), req.ip, request(req))
      .catch((err: unknown) => limits.refuseUnknown(req, res, err));
    if (!methodAllowedFor(claims.access, req.method)) {
      throw new AppError('READ_ONLY_TOKEN', `A READ_ONLY token may not use ${req.method}`);
    }
    await limits.forCaller(res, claims);
    req.claims = claims;
    next();
  };
}
