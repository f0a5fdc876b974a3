import type { Express } from 'express';
import { INTERNAL_BACK_OFFICE_SCOPE, type InternalClaimsVerifier } from '@trading/auth';
import { internalApi, jsonBody } from '@trading/subgraph';
import { presentAccount, type AccountsBackOffice } from './back-office.service';

/**
 * The back office's accounts API on the internal listener, for auth's admin API only:
 *   POST /internal/back-office/accounts                 {userId, type, currency} → 201
 *   GET  /internal/back-office/accounts?userId=          → {accounts}
 *   GET  /internal/back-office/accounts/:id              → account
 *   POST /internal/back-office/accounts/:id/closing      → {account, previousStatus} (now RESTRICTED)
 *   POST /internal/back-office/accounts/:id/close        {blockers, restoreTo} → account | 409 {reasons}
 */
export function mountAccountsBackOffice(internal: Express, backOffice: AccountsBackOffice, verifier: InternalClaimsVerifier): void {
  const router = internalApi(verifier, { caller: 'auth', scope: INTERNAL_BACK_OFFICE_SCOPE });
  router.post('/accounts', async (req, res) => {
    res.status(201).json(presentAccount(await backOffice.open(jsonBody(req))));
  });
  router.get('/accounts', async (req, res) => {
    res.json({ accounts: (await backOffice.list(req.query['userId'])).map(presentAccount) });
  });
  router.get('/accounts/:id', async (req, res) => {
    res.json(presentAccount(await backOffice.get(req.params['id'])));
  });
  router.post('/accounts/:id/closing', async (req, res) => {
    const { account, previousStatus } = await backOffice.beginClosing(req.params['id']);
    res.json({ account: presentAccount(account), previousStatus });
  });
  router.post('/accounts/:id/close', async (req, res) => {
    res.json(presentAccount(await backOffice.finishClosing(req.params['id'], jsonBody(req))));
  });
  internal.use('/internal/back-office', router);
}
