import type { DataSource } from 'typeorm';
import type { AccountsDirectory } from '@trading/accounts-directory';
import { errors } from '@trading/errors';
import { canonical } from '@trading/money';
import { callerOwnsAccount, perRequest, type SubgraphContext } from '@trading/subgraph';
import type { Resolvers } from '../resolvers-types.generated';

/** A holding as this subgraph resolves it: the accounts subgraph's key and the market's marks (market/resolvers.ts). */
export interface HoldingReference {
  accountId: string;
  symbol: string;
  lastPrice: string;
  previousClose: string;
}

/**
 * What each working sell promises of an account's holdings, one row per sell (or OCO pair), with
 * its symbol: a working sell its remainder, a bracket's or OTO's waiting exit what its entry has
 * bought so far (it sells the whole entry once that fills), the two legs of an OCO pair once (the
 * larger), an order already replaced not at all. `$1` is the account; `narrower` adds conditions
 * on `o`. The sell checks, position closes and `quantityAvailable` all count with this.
 */
export const promisedBySell = (narrower = '') => `
  SELECT o.symbol,
         max(CASE WHEN o.status = 'PENDING' THEN least(o.quantity, e.filled_quantity) ELSE o.quantity - o.filled_quantity END) AS promised
    FROM orders o LEFT JOIN orders e ON e.id = o.parent_order_id
   WHERE o.account_id = $1 AND o.side = 'SELL' AND o.status IN ('ACCEPTED', 'NEW', 'PARTIALLY_FILLED', 'PENDING')
     AND o.replaced_by_order_id IS NULL ${narrower}
   GROUP BY o.symbol, coalesce(o.oco_group_id, o.id)`;

/** Per symbol, the open quantity of an account's working sells. Read without the sell lock: a view, not a check. */
const OPEN_SELLS = `SELECT symbol, sum(promised)::text AS quantity FROM (${promisedBySell()}) g GROUP BY symbol`;

export function openSellsResolvers(dataSource: DataSource, accounts: Pick<AccountsDirectory, 'ownedIds'>): Resolvers {
  return {
    Position: {
      // A holding's orders are its owner's: the representation names any account, so ownership is
      // checked here (the market's prices beside it are everyone's). One read per account per request.
      openSellQuantity: async (position: HoldingReference, _args: unknown, ctx: SubgraphContext) => {
        const accountId = position.accountId.toLowerCase();
        if (!(await callerOwnsAccount(ctx, accountId, (claims, requestId) => accounts.ownedIds(claims, requestId))))
          throw errors.notFound('Account', 'accountId');
        const bySymbol = await perRequest(ctx, `open-sells:${accountId}`, async () => {
          const rows: Array<{ symbol: string; quantity: string }> = await dataSource.query(OPEN_SELLS, [accountId]);
          return new Map(rows.map((r) => [r.symbol, canonical(r.quantity)]));
        });
        return bySymbol.get(position.symbol) ?? '0';
      },
    },
  };
}
