import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { INTERNAL_CLAIMS_HEADER, INTERNAL_HOLDS_SCOPE, type Claims, type InternalClaimsVerifier } from '@trading/auth';
import { AppError } from '@trading/errors';
import type { AccountOwnership } from '../ownership/account-ownership';
import { parseId } from '../ledger/money';
import type { HoldOwner, HoldsService } from './holds.service';

declare module 'express-serve-static-core' {
  interface Request {
    internalClaims?: Claims;
  }
}

/**
 * The internal hold API (plain HTTP on banking's internal listener, not in the supergraph):
 *   POST /internal/holds                     {orderId, accountId, currency, amount} → 201 new | 200 existing
 *   POST /internal/holds/:orderId/release    {accountId} → 200
 *   POST /internal/holds/:orderId/capture    {accountId, amount, description?} → 200
 *   GET  /internal/holds/:orderId?accountId= → 200
 * Only the OMS, under its own service identity (scope internal:holds, which no edge may pass
 * on), may call it, acting for the order's user (`sub`). Placing checks with accounts that the
 * user owns the account; every later call must name the hold's user and account, so an order
 * id alone moves nothing. Errors are problem+json like every other service error.
 */
export function mountHoldRoutes(internal: Express, holds: HoldsService, verifier: InternalClaimsVerifier, ownership: AccountOwnership): void {
  const router = express.Router();
  router.use(express.json({ limit: '16kb' }));
  router.use(async (req: Request, _res: Response, next: NextFunction) => {
    const claims = await verifier.verify(req.get(INTERNAL_CLAIMS_HEADER));
    if (!claims) return next(new AppError('UNAUTHENTICATED', 'Missing or invalid internal claims'));
    if (claims.caller !== 'oms' || !claims.scope.includes(INTERNAL_HOLDS_SCOPE)) {
      return next(new AppError('INSUFFICIENT_SCOPE', `This operation needs scope ${INTERNAL_HOLDS_SCOPE}`, { requiredScopes: [INTERNAL_HOLDS_SCOPE] }));
    }
    req.internalClaims = claims;
    next();
  });
  const body = (req: Request): Record<string, unknown> => (req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {});
  const owner = (req: Request, accountId: unknown): HoldOwner => ({ userId: req.internalClaims!.sub, accountId: parseId(accountId, 'accountId') });

  router.post('/', async (req, res) => {
    const { accountId } = owner(req, body(req)['accountId']);
    // The OMS says whose order this is; accounts says whether that user owns the account.
    if (!(await ownership.find(accountId, req.internalClaims!, req.requestId))) throw new AppError('NOT_FOUND', 'Account not found', { field: 'accountId' });
    const { hold, created } = await holds.place(req.internalClaims!.sub, body(req));
    res.status(created ? 201 : 200).json(hold);
  });
  router.get('/:orderId', async (req, res) => {
    res.json(await holds.get(req.params['orderId'], owner(req, req.query['accountId'])));
  });
  router.post('/:orderId/release', async (req, res) => {
    res.json(await holds.release(req.params['orderId'], owner(req, body(req)['accountId'])));
  });
  router.post('/:orderId/capture', async (req, res) => {
    res.json(await holds.capture(req.params['orderId'], body(req), owner(req, body(req)['accountId'])));
  });
  internal.use('/internal/holds', router);
}
