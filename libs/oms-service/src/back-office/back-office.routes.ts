import type { Express } from 'express';
import type { DataSource } from 'typeorm';
import { INTERNAL_BACK_OFFICE_SCOPE, type InternalClaimsVerifier } from '@trading/auth';
import { internalApi, jsonBody } from '@trading/subgraph';
import { parseUuid } from '../orders/order-rules';
import type { InstrumentsBackOffice } from './instruments.back-office';

/** What the OMS still has working for an account, in words, for the back office closing it. */
async function closingBlockers(dataSource: DataSource, accountId: string): Promise<string[]> {
  const [{ open }] = await dataSource.query(
    `SELECT count(*)::int AS open FROM orders WHERE account_id = $1 AND status IN ('ACCEPTED', 'NEW', 'PARTIALLY_FILLED')`,
    [accountId],
  );
  return open ? [`${open} open order(s): cancel them first`] : [];
}

/**
 * The back office's OMS API on the internal listener, for auth's admin API only:
 *   GET  /internal/back-office/accounts/:id/closing-blockers → {blockers}
 *   GET  /internal/back-office/instruments                   → {instruments}
 *   POST /internal/back-office/instruments                   {symbol, name, currency, tickSize, lotSize?, price, …} → 201
 *   POST /internal/back-office/instruments/:symbol/halt | resume → instrument
 */
export function mountOmsBackOffice(
  internal: Express,
  dataSource: DataSource,
  instruments: InstrumentsBackOffice,
  verifier: InternalClaimsVerifier,
  /** The account is being closed (accounts has restricted it): this instance stops answering its status from memory. */
  closing: (accountId: string) => void = () => undefined,
): void {
  const router = internalApi(verifier, { caller: 'auth', scope: INTERNAL_BACK_OFFICE_SCOPE });
  router.get('/accounts/:id/closing-blockers', async (req, res) => {
    const accountId = parseUuid(req.params['id'], 'accountId');
    closing(accountId);
    res.json({ blockers: await closingBlockers(dataSource, accountId) });
  });
  router.get('/instruments', async (_req, res) => {
    res.json({ instruments: await instruments.list() });
  });
  router.post('/instruments', async (req, res) => {
    res.status(201).json(await instruments.add(jsonBody(req)));
  });
  router.post('/instruments/:symbol/halt', async (req, res) => {
    res.json(await instruments.setTradable(req.params['symbol'], false));
  });
  router.post('/instruments/:symbol/resume', async (req, res) => {
    res.json(await instruments.setTradable(req.params['symbol'], true));
  });
  internal.use('/internal/back-office', router);
}
