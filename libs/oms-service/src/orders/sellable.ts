import Decimal from 'decimal.js';
import type { EntityManager } from 'typeorm';
import type { OwnedAccount } from '@trading/accounts-directory';
import { promisedBySell } from './open-sells';

/**
 * What the account may still sell: the holding accounts knows, plus the OMS's trades it has
 * not applied yet (the OMS's net traded quantity minus accounts' applied one), minus what
 * open sells already promise. Callers hold the per-(account, symbol) lock when they act on it.
 */
export async function sellable(tx: EntityManager, account: OwnedAccount, symbol: string, excludeOrder?: string): Promise<Decimal> {
  const { held, promised } = await holding(tx, account, symbol, excludeOrder);
  return held.minus(promised);
}

/**
 * The holding including trades accounts has not applied yet, and what open sells (but
 * `excludeOrder`) already promise of it. A bracket's (or OTO's) waiting exit promises what its
 * entry has bought so far: it starts selling the whole entry once that fills, so the shares a
 * partly filled entry bought are not free for another sell or a close (that was a short sale).
 */
export async function holding(
  tx: EntityManager,
  account: OwnedAccount,
  symbol: string,
  excludeOrder?: string,
): Promise<{ held: Decimal; promised: Decimal }> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`sell:${account.id}:${symbol}`]);
  const [row] = await tx.query(
    `SELECT
       (SELECT coalesce(sum(CASE WHEN side = 'BUY' THEN quantity ELSE -quantity END), 0) FROM trades WHERE account_id = $1 AND symbol = $2)::text AS traded,
       (SELECT coalesce(sum(promised), 0) FROM (${promisedBySell(
         'AND o.symbol = $2 AND coalesce(o.oco_group_id, o.id) IS DISTINCT FROM $3::uuid',
       )}) g)::text AS promised`,
    [account.id, symbol, excludeOrder ?? null],
  );
  const settlement = account.positionSettlement ?? { quantity: '0', tradedQuantity: '0' };
  return {
    held: new Decimal(settlement.quantity).minus(settlement.tradedQuantity).plus(row.traded),
    promised: new Decimal(row.promised),
  };
}

/** A sell refused for want of shares, as the client reads it. */
export const insufficientPosition = (available: Decimal, symbol: string) =>
  `Insufficient position: ${available.toString()} ${symbol} available to sell (short selling is not allowed)`;
