import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { INTERNAL_CLAIMS_HEADER, type Claims, type InternalClaimsCodec } from '@trading/auth';
import { AppError } from '@trading/errors';
import type { HoldsService } from './holds.service';

/** The scope an internal caller (the OMS) needs for the hold API. No user token carries it. */
export const INTERNAL_HOLDS_SCOPE = 'internal:holds';

declare module 'express-serve-static-core' {
  interface Request {
    internalClaims?: Claims;
  }
}

/**
 * The internal hold API (plain HTTP, not in the supergraph, not routed by the facade):
 *   POST /internal/holds                     {orderId, accountId, currency, amount} → 201 new | 200 existing
 *   POST /internal/holds/:orderId/release    → 200
 *   POST /internal/holds/:orderId/capture    {amount, description?} → 200
 *   GET  /internal/holds/:orderId            → 200
 * Callers present a valid `x-internal-claims` header whose scope includes `internal:holds`.
 * Errors are problem+json like every other service error.
 */
export function mountHoldRoutes(app: Express, holds: HoldsService, codec: InternalClaimsCodec): void {
  const router = express.Router();
  router.use(express.json({ limit: '16kb' }));
  router.use(async (req: Request, _res: Response, next: NextFunction) => {
    const claims = await codec.verify(req.get(INTERNAL_CLAIMS_HEADER));
    if (!claims) return next(new AppError('UNAUTHENTICATED', 'Missing or invalid internal claims'));
    if (!claims.scope.includes(INTERNAL_HOLDS_SCOPE)) return next(new AppError('INSUFFICIENT_SCOPE', `This operation needs scope ${INTERNAL_HOLDS_SCOPE}`, { requiredScopes: [INTERNAL_HOLDS_SCOPE] }));
    req.internalClaims = claims;
    next();
  });
  const body = (req: Request): Record<string, unknown> => (req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {});

  router.post('/', async (req, res) => {
    const { hold, created } = await holds.place(req.internalClaims?.sub ?? null, body(req));
    res.status(created ? 201 : 200).json(hold);
  });
  router.get('/:orderId', async (req, res) => {
    res.json(await holds.get(req.params['orderId']));
  });
  router.post('/:orderId/release', async (req, res) => {
    res.json(await holds.release(req.params['orderId']));
  });
  router.post('/:orderId/capture', async (req, res) => {
    res.json(await holds.capture(req.params['orderId'], body(req)));
  });
  app.use('/internal/holds', router);
}
