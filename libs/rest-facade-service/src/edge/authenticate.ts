import type { RequestHandler } from 'express';
import { methodAllowedFor, type Claims, type EdgeAuthenticator } from '@trading/auth';
import { AppError } from '@trading/errors';
import type { ApiLimits } from '@trading/rate-limit';

declare module 'express-serve-static-core' {
  interface Request {
    claims?: Claims;
  }
}

/**
 * Authenticates every API call once, at the edge: token, live session, IP restriction, and
 * the PAT method rule of spec §5.2 (READ_ONLY → GET, HEAD, OPTIONS only), then the token's
 * and the user's request budgets. The order budgets are charged by the placing route itself
 * (routeTableRouter), not by a path string here.
 */
export function authenticate(edge: EdgeAuthenticator, limits: ApiLimits): RequestHandler {
  return async (req, res, next) => {
    const claims = await edge.authenticate(req.get('authorization'), req.ip).catch((err: unknown) => limits.refuseUnknown(req, res, err));
    if (!methodAllowedFor(claims.access, req.method)) {
      throw new AppError('READ_ONLY_TOKEN', `A READ_ONLY token may not use ${req.method}`);
    }
    await limits.forCaller(res, claims);
    req.claims = claims;
    next();
  };
}
