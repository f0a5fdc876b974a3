import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { INTERNAL_CLAIMS_HEADER, type Claims, type InternalClaimsVerifier, type ServiceName } from '@trading/auth';
import { AppError } from '@trading/errors';

declare module 'express-serve-static-core' {
  interface Request {
    /** The verified internal claims of a call to an internal API (set by `internalApi`). */
    internalClaims?: Claims;
  }
}

/**
 * A router for a plain-HTTP internal API on a service's internal listener (the holds API, the
 * back office): JSON bodies, and only the named service, under its own identity with the named
 * scope (which no edge may pass on), gets past it. Errors are problem+json like every other.
 */
export function internalApi(verifier: InternalClaimsVerifier, allowed: { caller: ServiceName; scope: string }): Router {
  const router = express.Router();
  router.use(express.json({ limit: '16kb' }));
  router.use(async (req: Request, _res: Response, next: NextFunction) => {
    const claims = await verifier.verify(req.get(INTERNAL_CLAIMS_HEADER));
    if (!claims) return next(new AppError('UNAUTHENTICATED', 'Missing or invalid internal claims'));
    if (claims.caller !== allowed.caller || !claims.scope.includes(allowed.scope)) {
      return next(new AppError('INSUFFICIENT_SCOPE', `This operation needs scope ${allowed.scope}`, { requiredScopes: [allowed.scope] }));
    }
    req.internalClaims = claims;
    next();
  });
  return router;
}

/** A JSON body as an object (anything else reads as empty, so each field is then reported missing by name). */
export const jsonBody = (req: Request): Record<string, unknown> =>
  req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};
