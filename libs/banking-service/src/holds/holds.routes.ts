import type { Express, Request } from 'express';
import { INTERNAL_HOLDS_SCOPE, type InternalClaimsVerifier } from '@trading/auth';
import { AppError, parseUuid } from '@trading/errors';
import { internalApi, jsonBody as body } from '@trading/subgraph';
import type { KnownOwners } from '@trading/accounts-directory';
import type { HoldOwner, HoldsService } from './holds.service';

/**
 * The internal hold API (plain HTTP on banking's internal listener, not in the supergraph):
 *   POST /internal/holds                     {orderId, accountId, currency, amount} → 201 new | 200 existing
 *   POST /internal/holds/:orderId/release    {accountId} → 200
 *   POST /internal/holds/:orderId/capture    {accountId, amount, description?} → 200
 *   POST /internal/holds/:orderId/replace    {accountId, replacementOrderId, keep, amount} → 200 the replacement's hold
 *   GET  /internal/holds/:orderId?accountId= → 200
 * Only the OMS, under its own service identity (scope internal:holds, which no edge may pass
 * on), may call it, acting for the order's user (`sub`). Placing checks with accounts that the
 * user owns the account; every later call must name the hold's user and account, so an order
 * id alone moves nothing. Errors are problem+json like every other service error.
 */
export function mountHoldRoutes(internal: Express, holds: HoldsService, verifier: InternalClaimsVerifier, owners: KnownOwners): void {
  const router = internalApi(verifier, { caller: 'oms', scope: INTERNAL_HOLDS_SCOPE });
  const owner = (req: Request, accountId: unknown): HoldOwner => ({
    userId: req.internalClaims!.sub,
    accountId: parseUuid(accountId, 'accountId'),
  });

  router.post('/', async (req, res) => {
    const { accountId } = owner(req, body(req)['accountId']);
    // The OMS says whose order this is; accounts says whether that user owns the account (once per pair: owners never change).
    if (!(await owners.owns(accountId, req.internalClaims!, req.requestId)))
      throw new AppError('NOT_FOUND', 'Account not found', { field: 'accountId' });
    const { hold, created } = await holds.place(req.internalClaims!.sub, body(req));
    res.status(created ? 201 : 200).json(hold);
  });
  router.get('/:orderId', async (req, res) => {
    res.json(await holds.get(req.params['orderId'], owner(req, req.query['accountId'])));
  });
  router.post('/:orderId/release', async (req, res) => {
    res.json(await holds.release(req.params['orderId'], owner(req, body(req)['accountId'])));
  });
  router.post('/:orderId/replace', async (req, res) => {
    res.json(await holds.replace(req.params['orderId'], body(req), owner(req, body(req)['accountId'])));
  });
  router.post('/:orderId/capture', async (req, res) => {
    res.json(await holds.capture(req.params['orderId'], body(req), owner(req, body(req)['accountId'])));
  });
  internal.use('/internal/holds', router);
}
