import { parseUuid } from '@trading/errors';
import Decimal from 'decimal.js';
import type { Express } from 'express';
import type { DataSource } from 'typeorm';
import { INTERNAL_BACK_OFFICE_SCOPE, type InternalClaimsVerifier } from '@trading/auth';
import { internalApi } from '@trading/subgraph';
import type { BalancesService } from '../balances/balances.service';

/**
 * What banking still holds for an account, in words, for the back office closing it: cash
 * (settled or not), cash held for orders, transfers not yet cleared. Empty: nothing blocks.
 */
async function closingBlockers(dataSource: DataSource, balances: BalancesService, accountId: string): Promise<string[]> {
  const blockers: string[] = [];
  for (const b of await balances.forAccount(accountId)) {
    if (!new Decimal(b.cash).isZero())
      blockers.push(`cash remains: ${b.cash} ${b.currency}${new Decimal(b.held).isZero() ? '' : ` (${b.held} held for open orders)`}`);
  }
  const [{ pending }] = await dataSource.query(
    `SELECT count(*)::int AS pending FROM funding_transactions WHERE account_id = $1 AND state = 'PENDING'`,
    [accountId],
  );
  if (pending) blockers.push(`${pending} deposit(s) or withdrawal(s) pending`);
  return blockers;
}

/**
 * The back office's banking API on the internal listener, for auth's admin API only:
 *   GET /internal/back-office/accounts/:id/closing-blockers → {blockers}
 */
export function mountBankingBackOffice(
  internal: Express,
  dataSource: DataSource,
  balances: BalancesService,
  verifier: InternalClaimsVerifier,
): void {
  const router = internalApi(verifier, { caller: 'auth', scope: INTERNAL_BACK_OFFICE_SCOPE });
  router.get('/accounts/:id/closing-blockers', async (req, res) => {
    res.json({ blockers: await closingBlockers(dataSource, balances, parseUuid(req.params['id'], 'accountId')) });
  });
  internal.use('/internal/back-office', router);
}
